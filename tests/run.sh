#!/usr/bin/env bash
# Runs each Check test binary given, shows its output, and closes with one
# summary line over all of them: "kite: N passed, N failed, N skipped".
# A binary that cannot run its GPU cases prints "KITE_SKIPPED: N (reason)".
# KITE_TEST_TIMEOUT=SECONDS stops a binary that runs longer (a hung kernel),
# keeping what it printed so far and counting it as failed.
set -u
passed=0 failed=0 skipped=0 status=0
run_bin() {
  if [ -n "${KITE_TEST_TIMEOUT:-}" ]; then timeout -k 5 "$KITE_TEST_TIMEOUT" "$1"; else "$1"; fi
}
for bin in "$@"; do
  echo "== $bin"
  out=$(run_bin "$bin" 2>&1); rc=$?
  if [ -n "${KITE_TEST_TIMEOUT:-}" ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
    out="$out
== $bin stopped after ${KITE_TEST_TIMEOUT} s (KITE_TEST_TIMEOUT)"
    failed=$((failed + 1))
  fi
  printf '%s\n' "$out"
  while read -r checks fails errs; do
    passed=$((passed + checks - fails - errs)); failed=$((failed + fails + errs))
  done < <(printf '%s\n' "$out" | sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p')
  while read -r n; do skipped=$((skipped + n)); done < <(printf '%s\n' "$out" | sed -n 's/^KITE_SKIPPED: \([0-9]*\).*/\1/p')
  if [ $rc -ne 0 ]; then echo "== $bin exited with $rc"; status=1; fi
done
[ $failed -eq 0 ] || status=1
echo "kite: $passed passed, $failed failed, $skipped skipped"
exit $status
