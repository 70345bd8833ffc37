#!/usr/bin/env bash
# Runs each Check test binary given, shows its output, and closes with one
# summary line over all of them: "kite: N passed, N failed, N skipped".
# A binary that cannot run its GPU cases prints "KITE_SKIPPED: N (reason)".
set -u
passed=0 failed=0 skipped=0 status=0
for bin in "$@"; do
  echo "== $bin"
  out=$("$bin" 2>&1); rc=$?
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
