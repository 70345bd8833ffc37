#!/usr/bin/env bash
# Runs on the GPU machine (the `device` tool), in stages that each fit one
# device call (10 minutes); the build stays on the warm machine between calls.
#   bash bench/device_run.sh gpu   [quick]   build (make -j16), the GPU suites only (test_gpu, test_gemm)
#   bash bench/device_run.sh tests [quick]   build, the whole test suite (make test, for the record)
#   bash bench/device_run.sh rows  [quick]   row-op benchmarks, every variant, torch.compile
#   bash bench/device_run.sh gemm  [quick]   gemm against cuBLASLt, SASS of the gemm kernels
#   bash bench/device_run.sh first [quick]   build, test_gemm (each variant alone when it fails),
#                                            test_gpu, gemm SASS, the gemm bench if time is left
#   bash bench/device_run.sh measure [quick] rows, then gemm (every variant)
#   bash bench/device_run.sh final           gemm triage and test_gemm, test_gpu split over
#                                            processes, gemm and row variants, vs torch, in 500 s
#   bash bench/device_run.sh all   [quick]   all three (only when they fit one call)
#   bash bench/device_run.sh check           the gemm suite against cuBLASLt, then test_gemm beside
#                                            test_gpu's partitions
#   bash bench/device_run.sh rowsall         every row variant (bf16), the dispatch, torch.compile
#   bash bench/device_run.sh rowscheck       test_gpu's partitions (a crash's frames named), then rowsall
#   bash bench/device_run.sh final4          every test binary (the GPU ones split), then the gemm suite
#   bash bench/device_run.sh rowsquick       every bf16 row variant for N = 1024 ... 16384, few runs
#   bash bench/device_run.sh final5          every test binary (GPU ones split), row SASS, rowsall
#   bash bench/device_run.sh tune            make tune (the tsv comes back in $OUT), --check-dispatch
#   bash bench/device_run.sh tune6           the tunes step by step in 580 s: the table regenerated,
#                                            kite_gemm's overhead, the held-out checks, the tuned tests
#   bash bench/device_run.sh check6          new variants and tuned rules tested, row SASS, the
#                                            held-out checks, torch.compile
#   bash bench/device_run.sh retune6         the row tune again (the committed gemm lines kept),
#                                            the table, its row rules tested, the held-out checks
#   bash bench/device_run.sh tuneall         make tune: both files come back in $OUT (commit, make gen)
#   bash bench/device_run.sh tune7           the rmsnorm register variants tested, then tuneall
#   bash bench/device_run.sh check7          the held-out checks, kite_gemm's overhead, torch.compile
#   bash bench/device_run.sh tune8           the occ/hint rows tested and timed, the row tune, the
#                                            table, its rules tested, torch.compile (rmsnorm, softmax)
#   bash bench/device_run.sh clus8           the cluster rows tested, SASS, timed at 16K-256K, the row tune
#   bash bench/device_run.sh clus8b          the pipelined cluster rows tested, the row tune, its rules
#                                            tested, torch.compile at 64K-256K (KITE_CALL_S: the call's seconds)
#   bash bench/device_run.sh check8          tuned rows tested, gemm overhead and held-out checks, rows
#                                            held-out, torch.compile at six N
#   bash bench/device_run.sh check7b         the row held-out check, also on 16-byte rows (two draws), torch.compile
#   bash bench/device_run.sh norm9           rmsnorm_bwd: test_norm, SASS, its variants timed, torch.compile
#   bash bench/device_run.sh first9          norm9, then test_gpu over every row op, row SASS
#   bash bench/device_run.sh measure9        the other backward ops timed and against torch.compile, the
#                                            three backward ops' tune (bwd*.tsv in $OUT)
#   bash bench/device_run.sh final9          test_norm and test_gpu's changed partitions, then the backward
#                                            ops and rmsnorm against torch.compile (summary.txt in $OUT)
#   bash bench/device_run.sh ln10            layernorm (branch issue5-layernorm): test_norm's cases, torch.compile
#   bash bench/device_run.sh first10         ln10, SASS of the new row objects, each backward op's tune
#                                            ($OUT/bwd.<op>.tsv; KITE_CALL_S: the call's seconds)
#   bash bench/device_run.sh second10        layernorm_bwd's first run and what changed beside it tested,
#                                            three tunes, the table regenerated there, torch.compile
#   bash bench/device_run.sh final10         rmsnorm_bwd's and layernorm_bwd's cluster rows tested and tuned,
#                                            the table regenerated there, torch.compile, ncu on layernorm
#   bash bench/device_run.sh ln11            (branch issue5-ln-floats) layernorm's forward tested, tuned into
#                                            the table, torch.compile, ncu
#   bash bench/device_run.sh probe11         ncu and SASS of layernorm's slow rows beside rmsnorm's; the
#                                            partial-sum ops retuned on 1024 rows, torch.compile
#   bash bench/device_run.sh ln12            layernorm and layernorm_bwd: every variant and case tested
#                                            (KITE_TEST_S seconds a process, 150), SASS, tuned
#                                            (KITE_TUNE_OPS), torch.compile (KITE_VS_OPS); with
#                                            KITE_ONLY='layernorm*' exported it builds those alone
#   bash bench/device_run.sh bwd13           rmsnorm_bwd and layernorm_bwd the same way (KITE_ONLY='*norm_bwd*')
#   bash bench/device_run.sh checktable      the committed table: tuned tests, held-out checks,
#                                            kite_gemm's overhead, torch.compile
# Every stage builds first (a no-op when the build is there).  Logs go to
# $OUT; a short table comes last.  Each binary runs under a time limit, so a
# hung kernel costs minutes, not the call.
set -uo pipefail
stage=${1:-all} mode=${2:-full}
OUT=${OUT:-/tmp/kite-out}; mkdir -p "$OUT"
# Lua, Check and pkg-config unpacked from Debian packages, where carried (.deps/).
[ -f .deps/env.sh ] && source .deps/env.sh
export PATH="$PATH:/usr/local/cuda/bin"
bargs=; [ "$mode" = quick ] && bargs=--quick

build() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  # the device's .git may lag the tree it was sent: pass KITE_COMMIT (tune lines carry it too)
  echo "${KITE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null) (git there; KITE_COMMIT unset)}"
  local t0=$(date +%s)
  { make -j16 && make -j16 build/kite-bench test-bins; } >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  echo "build: $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
}

# Every gemm variant in its own process on the small shapes, 12 at a time,
# 15 s each: one hung or faulting kernel names itself and spoils no other.
gemm_triage() {
  local t0=$(date +%s)
  names=$(awk -F'\t' '$2 == "gemm" { print $1 }' out/manifest.tsv)
  printf '%s\n' $names | xargs -P 12 -I{} sh -c \
    'KITE_GEMM_SMALL=1 KITE_TEST_ONLY={} timeout 15 build/test_gemm >"$0/triage.{}.log" 2>&1; echo "{} rc=$?"' /tmp \
    | sort >"$OUT/triage.txt"
  echo "---- gemm triage (small shapes, one process per variant): $(grep -c 'rc=0$' "$OUT/triage.txt") of $(wc -l <"$OUT/triage.txt") pass, $(( $(date +%s) - t0 )) s"
  grep -v 'rc=0$' "$OUT/triage.txt" | head -40
  for f in $(grep -v 'rc=0$' "$OUT/triage.txt" | head -3 | cut -d' ' -f1); do
    echo "-- $f"; grep -E ":[EF]:|gemm variant" "/tmp/triage.$f.log" | cut -c1-300 | head -4
  done
}

first() {
  gemm_triage
  local rc=1 t0=$(date +%s)
  if ! grep -qv 'rc=0$' "$OUT/triage.txt"; then
    KITE_TEST_TIMEOUT=200 bash tests/run.sh build/test_gemm >"$OUT/gemm_test.log" 2>&1
    rc=$?
    grep -E "^(KITE_SKIPPED|[0-9]+%: Checks)|kite: [0-9]+ passed|stopped after" "$OUT/gemm_test.log" | tail -5
    grep -E ":[EF]:" "$OUT/gemm_test.log" | cut -c1-300 | head -12
    grep "starting" "$OUT/gemm_test.log" | tail -1
    echo "test_gemm: rc=$rc, $(( $(date +%s) - t0 )) s"
  fi
  local t1=$(date +%s)
  KITE_TEST_TIMEOUT=150 bash tests/run.sh build/test_gpu >"$OUT/gpu.log" 2>&1
  echo "test_gpu: rc=$?, $(( $(date +%s) - t1 )) s"
  grep -E "^(KITE_SKIPPED|[0-9]+%: Checks)|kite: [0-9]+ passed|stopped after" "$OUT/gpu.log" | tail -4
  grep -E ":[EF]:" "$OUT/gpu.log" | cut -c1-300 | head -12
  gemm_sass
  if [ $rc -eq 0 ] && [ $(( $(date +%s) - T0 )) -lt 400 ]; then
    timeout 150 build/kite-bench gemm --quick --csv "$OUT/gemm.csv" >"$OUT/gemm.txt" 2>&1
    echo "kite-bench gemm --quick rc=$?"; cat "$OUT/gemm.txt"
  fi
}

# The row ops of the generated table (every op but gemm).
row_ops() { awk -F'\t' 'NR > 1 && $2 != "gemm" { print $2 }' out/manifest.tsv | sort -u; }

# test_gpu split over processes (its cases are host-bound: float64 references
# of up to 24 M values per variant): the variants of each op and dtype in one
# process each, every other test case (Check's CK_RUN_CASE) in one each; all at
# once, 300 s each.
gpu_parallel() {
  local t0=$(date +%s) parts="" op dt
  for op in $(row_ops); do for dt in bf16 f16 f32; do parts="$parts ${op}_${dt}_*"; done; done
  set -f; printf '%s\n' $parts entry targets invalid launch huge tuned | xargs -P 14 -I{} sh -c '
    case "$1" in
      *_*) CK_RUN_CASE=variants KITE_TEST_ONLY="$1" timeout 300 build/test_gpu >"/tmp/gpu.$(echo "$1" | tr -d "*").log" 2>&1 ;;
      *) CK_RUN_CASE="$1" timeout 300 build/test_gpu >"/tmp/gpu.$1.log" 2>&1 ;;
    esac
    echo "$1 rc=$?"' sh {} | sort >"$OUT/gpu_parts.txt"; set +f
  cat /tmp/gpu.*.log >"$OUT/gpu.log"
  echo "---- test_gpu in $(wc -l <"$OUT/gpu_parts.txt") processes, $(( $(date +%s) - t0 )) s: $(grep -c 'rc=0$' "$OUT/gpu_parts.txt") exit 0"
  grep -v 'rc=0$' "$OUT/gpu_parts.txt"
  grep -E "^[0-9]+%: Checks" "$OUT/gpu.log" | awk '{ c += $3; f += $5; e += $7 } END { printf "test_gpu: %d checks, %d failures, %d errors\n", c, f, e }'
  grep -E ":[EF]:" "$OUT/gpu.log" | cut -c1-300 | head -12
}

# The last call of a session: what changed is checked, everything measured,
# optional steps cut short when the call's 500 s would run out.
final() {
  gemm_triage
  KITE_TEST_TIMEOUT=120 bash tests/run.sh build/test_gemm >"$OUT/gemm_test.log" 2>&1
  echo "test_gemm: rc=$?"; grep -E "Checks|:[EF]:|stopped" "$OUT/gemm_test.log" | cut -c1-300 | head -8
  gpu_parallel
  left() { echo $(( 500 - ($(date +%s) - T0) )); }
  local l=$(left); [ $l -gt 150 ] && l=150
  timeout $l build/kite-bench gemm --variants --csv "$OUT/gemm.csv" >"$OUT/gemm.txt" 2>&1
  echo "kite-bench gemm --variants rc=$? ($(left) s left)"
  grep -E "^[0-9]+x[0-9]+x[0-9]+ +=|best variant|geomean|^# 8192" "$OUT/gemm.txt"
  l=$(left); [ $l -gt 60 ] && l=60
  timeout $l build/kite-bench --variants --csv "$OUT/variants.csv" >"$OUT/variants.txt" 2>&1
  echo "kite-bench --variants rc=$? ($(left) s left)"; grep -vE "^(rmsnorm|softmax|cross_entropy) " "$OUT/variants.txt" | tail -3
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -20 "$OUT/vs_torch.txt"
  # issue 2's last miss (rmsnorm N = 16384): do the row's loads wait for w's store to shared memory?
  cuobjdump --dump-sass build/obj/rmsnorm/rmsnorm_bf16_reg_t512_r1_n4_v16_c0_p1.o 2>/dev/null \
    | grep -nE "LDG|STS|LDS|BAR|SHFL" >"$OUT/rmsnorm16k_sass.txt"; head -24 "$OUT/rmsnorm16k_sass.txt"
}

gpu() {
  local t0=$(date +%s)
  KITE_TEST_TIMEOUT=${KITE_TEST_TIMEOUT:-240} bash tests/run.sh build/test_gpu build/test_gemm >"$OUT/gpu.log" 2>&1
  local rc=$?
  grep -E "^(==|KITE_SKIPPED|[0-9]+%: Checks)|kite: [0-9]+ passed|:[EF]:|stopped after" "$OUT/gpu.log" | tail -40
  grep "starting" "$OUT/gpu.log" | tail -1
  echo "GPU suites: rc=$rc, $(( $(date +%s) - t0 )) s"
}

tests() {
  local t0=$(date +%s)
  KITE_TEST_TIMEOUT=${KITE_TEST_TIMEOUT:-300} make -j16 test >"$OUT/test.log" 2>&1; local rc=$?
  grep -E "^(==|KITE_SKIPPED|[0-9]+%: Checks)|kite: [0-9]+ passed|:[EF]:|stopped after" "$OUT/test.log" | tail -40
  echo "make test: rc=$rc, $(( $(date +%s) - t0 )) s"
}

rows() {
  timeout 240 build/kite-bench $bargs --csv "$OUT/bench.csv" >"$OUT/bench.txt" 2>&1
  echo "kite-bench rc=$?"
  timeout 240 build/kite-bench $bargs --variants --csv "$OUT/variants.csv" >"$OUT/variants.txt" 2>&1
  echo "kite-bench --variants rc=$?"
  PYTHONUNBUFFERED=1 timeout 240 python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$?"
  cuobjdump --dump-sass build/libkite.a 2>/dev/null | grep -cE "LDL|STL" | sed 's/^/local-memory instructions in SASS: /'
  echo "---- kite-bench"; cat "$OUT/bench.txt"
  echo "---- vs torch"; tail -25 "$OUT/vs_torch.txt"
}

# The gemm kernels' SASS, per variant: libkite.a's gemm members are
# build/obj/gemm/<variant>.o, one variant each, so each is dumped on its own.
# Columns: variant, kernels, HGMMA (wgmma), HMMA (mma.sync), LDL, STL.
gemm_sass() {
  for o in build/obj/gemm/*.o; do
    [ -f "$o" ] || continue
    cuobjdump --dump-sass "$o" 2>/dev/null | awk -v v="$(basename "$o" .o)" '
      /Function :/ { nf++ }
      /[ \t]HGMMA[.]/ { hg++ }
      /[ \t]HMMA[.]/ { hm++ }
      /[ \t]LDL[. ]/ { ldl++ }
      /[ \t]STL[. ]/ { stl++ }
      END { printf "%-60s %3d %6d %6d %5d %5d\n", v, nf, hg, hm, ldl, stl }'
  done >"$OUT/gemm_sass.txt"
  echo "---- gemm SASS (full table: gemm_sass.txt; variant kernels HGMMA HMMA LDL STL)"
  awk '{ n++; if ($3 > 0) hg++; else if ($4 > 0) hm++; else none++; if ($5 + $6 > 0) loc++ }
       END { printf "gemm variants: %d; with HGMMA: %d; HMMA only: %d; neither: %d; with LDL/STL: %d\n",
             n, hg, hm, none, loc }' "$OUT/gemm_sass.txt"
  awk '$5 + $6 > 0 || ($3 == 0 && $4 == 0)' "$OUT/gemm_sass.txt" | head -20
}

gemm() {
  gemm_sass
  timeout 300 build/kite-bench gemm $bargs --variants --csv "$OUT/gemm.csv" >"$OUT/gemm.txt" 2>&1
  echo "kite-bench gemm rc=$?"
  echo "---- gemm vs cuBLASLt"; cat "$OUT/gemm.txt"
}

# The dispatched gemm against cuBLASLt over the whole suite (alone on the GPU).
gemm_suite() {
  timeout 200 build/kite-bench gemm >"$OUT/gemm.txt" 2>&1
  echo "kite-bench gemm rc=$? ($(( $(date +%s) - T0 )) s)"
  grep -E "^[0-9]+x[0-9]+x[0-9]+ |geomean|^shape" "$OUT/gemm.txt" | cut -c1-160
}

# test_gemm beside test_gpu's partitions (and the CPU suites too, with "cpu").
gpu_suites() {
  local cpu=
  if [ "${1:-}" = cpu ]; then
    KITE_TEST_TIMEOUT=300 bash tests/run.sh build/test_gen build/test_runtime build/test_dist >"$OUT/cpu_tests.log" 2>&1 &
    cpu=$!
  fi
  KITE_TEST_TIMEOUT=240 bash tests/run.sh build/test_gemm >"$OUT/gemm_test.log" 2>&1 &
  local gt=$!
  gpu_parallel
  wait $gt; echo "test_gemm: rc=$?"; grep -E "Checks|:[EF]:|stopped" "$OUT/gemm_test.log" | cut -c1-300 | head -8
  crash_names
  [ -z "$cpu" ] && return
  wait $cpu; echo "test_gen, test_runtime, test_dist: rc=$?"
  grep -E "Checks|:[EF]:|stopped|SKIPPED|kite: [0-9]+ passed" "$OUT/cpu_tests.log" | cut -c1-300 | head -10
}

# A crash's stack, as the crash handler printed it: the test binary's frames
# named by addr2line (functions; lines where built with -g).
crash_names() {
  grep -q 'launch rc=0' "$OUT/gpu_parts.txt" && return
  echo "-- launch case crashed (ulimit -s: $(ulimit -s)):"; grep -A12 'crashed; stack' /tmp/gpu.launch.log
  for a in $(grep -o 'test_gpu(+0x[0-9a-f]*)' /tmp/gpu.launch.log | grep -o '0x[0-9a-f]*'); do
    echo "$a $(addr2line -f -i -e build/test_gpu "$a" | tr '\n' ' ')"
  done
  for a in $(grep -o 'libc.so.6(+0x[0-9a-f]*)' /tmp/gpu.launch.log | grep -o '0x[0-9a-f]*'); do
    echo "libc $a $(nm -D /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk -v a=$((a)) '{ v = strtonum("0x" $1); if (v <= a && v > best) { best = v; n = $3 } } END { print n }')"
  done
}

# Session 4, call 2: row ops, every bf16 variant and the dispatch, and torch.
rowsall() {
  timeout 200 build/kite-bench --variants >"$OUT/variants.txt" 2>&1
  echo "kite-bench --variants rc=$? ($(( $(date +%s) - T0 )) s)"
  grep -vE "^(rmsnorm|softmax|cross_entropy) " "$OUT/variants.txt" | tail -3
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/vs_torch.py >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(( $(date +%s) - T0 )) s)"; tail -22 "$OUT/vs_torch.txt"
}

# Local-memory instructions (spills, stack) in the row kernels' SASS.
row_sass() {
  local o
  for o in $(for op in $(row_ops); do ls build/obj/$op/*.o; done); do
    cuobjdump --dump-sass "$o" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "$o"
  done >/tmp/row_ldl.txt
  echo "row objects with LDL/STL in SASS: $(wc -l </tmp/row_ldl.txt) of $(for op in $(row_ops); do ls build/obj/$op/*.o; done | wc -l)"
  head -5 /tmp/row_ldl.txt
}

# Measured dispatch: make tune writes bench/tuned/h200.tsv (fetch it from
# $OUT and commit it), regenerates the table; then the held-out check.
tune() {
  local t0=$(date +%s)
  timeout 420 make tune KITE_GPU=h200 >"$OUT/tune.log" 2>&1
  echo "make tune: rc=$?, $(( $(date +%s) - t0 )) s; $(grep -cv '^#' bench/tuned/h200.tsv 2>/dev/null) tsv lines"
  cp bench/tuned/h200.tsv "$OUT/" 2>/dev/null
  grep -E "tune: wrote|FAILED|error" "$OUT/tune.log" | tail -5
  timeout 120 build/kite-bench --check-dispatch >"$OUT/check_dispatch.txt" 2>&1
  echo "check-dispatch: rc=$?"; tail -3 "$OUT/check_dispatch.txt"
  timeout 200 build/kite-bench gemm --check-dispatch >"$OUT/check_dispatch_gemm.txt" 2>&1
  echo "gemm check-dispatch: rc=$?"; grep "^check-dispatch" "$OUT/check_dispatch_gemm.txt"
}

# Session 6: the first measured table, step by step within the call's 580 s:
# the tunes (bench/tuned/h200.tsv comes back in $OUT), the table regenerated
# from them, kite_gemm's host overhead, the held-out checks, the tuned cases.
tune6() {
  left() { echo $(( 580 - ($(date +%s) - T0) )); }
  local t0=$(date +%s)
  mkdir -p bench/tuned
  timeout $(( $(left) - 280 )) build/kite-bench --tune bench/tuned/h200.tsv >"$OUT/tune_rows.log" 2>&1
  echo "row tune: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "^tune:" "$OUT/tune_rows.log" | tail -4
  t0=$(date +%s)
  timeout $(( $(left) - 130 )) build/kite-bench gemm --tune bench/tuned/h200.tsv >"$OUT/tune_gemm.log" 2>&1
  echo "gemm tune: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "tune:" "$OUT/tune_gemm.log" | tail -4
  cp bench/tuned/h200.tsv "$OUT/"
  echo "tsv: $(grep -cv '^#' bench/tuned/h200.tsv) lines, $(grep -c 'failed' bench/tuned/h200.tsv) failed"
  t0=$(date +%s)
  { make gen KITE_GPU=h200 && make -j16 build test-bins build/kite-bench; } >"$OUT/regen.log" 2>&1
  echo "regenerated with the rules: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "kite-gen:|rror" "$OUT/regen.log" | head -5
  timeout 40 build/kite-bench gemm --overhead >"$OUT/overhead.txt" 2>&1; echo "overhead rc=$?"; cat "$OUT/overhead.txt"
  timeout 90 build/kite-bench --check-dispatch --variants >"$OUT/check_dispatch.txt" 2>&1
  echo "check-dispatch: rc=$?"; tail -1 "$OUT/check_dispatch.txt"
  CK_RUN_CASE=tuned timeout 60 build/test_gpu >"$OUT/tuned_rows.log" 2>&1
  echo "test_gpu tuned: rc=$?"; grep -E "Checks|:[EF]:" "$OUT/tuned_rows.log" | head -5
  timeout $(( $(left) - 5 )) build/kite-bench gemm --check-dispatch >"$OUT/check_dispatch_gemm.txt" 2>&1
  echo "gemm check-dispatch: rc=$?"; grep "^check-dispatch" "$OUT/check_dispatch_gemm.txt"
}

# Session 6, second call: the table with its rules.  The new variants
# (128-thread CTAs) and every tuned rule against the references, the row SASS;
# then, the GPU alone, the held-out checks and torch.compile.
check6() {
  left() { echo $(( 570 - ($(date +%s) - T0) )); }
  local t0=$(date +%s) parts="" op dt c
  for op in rmsnorm softmax cross_entropy; do for dt in bf16 f16 f32; do for c in t32_r4 t64_r2 t128_r1; do
    parts="$parts ${op}_${dt}_reg_${c}_*"; done; done; done
  set -f; printf '%s\n' $parts | xargs -P 14 -I{} sh -c '
    CK_RUN_CASE=variants KITE_TEST_ONLY="$1" timeout 200 build/test_gpu >"/tmp/new.$(echo "$1" | tr -d "*").log" 2>&1
    echo "$1 rc=$?"' sh {} | sort >"$OUT/new_parts.txt" &
  set +f
  CK_RUN_CASE=tuned timeout 200 build/test_gpu >"$OUT/tuned_rows.log" 2>&1 &
  local tr=$!
  CK_RUN_CASE=tuned timeout 250 build/test_gemm >"$OUT/tuned_gemm.log" 2>&1 &
  local tg=$!
  row_sass
  wait
  cat /tmp/new.*.log >"$OUT/new_variants.log"
  echo "new variants: $(grep -c 'rc=0$' "$OUT/new_parts.txt") of $(wc -l <"$OUT/new_parts.txt") processes exit 0, $(( $(date +%s) - t0 )) s"
  grep -E "^[0-9]+%: Checks" "$OUT/new_variants.log" | awk '{ c += $3; f += $5; e += $7 } END { printf "  %d checks, %d failures, %d errors\n", c, f, e }'
  grep -E ":[EF]:" "$OUT/new_variants.log" | cut -c1-250 | head -5
  for f in tuned_rows tuned_gemm; do echo "$f: $(grep -E '^[0-9]+%: Checks' "$OUT/$f.log")"; grep -E ":[EF]:" "$OUT/$f.log" | cut -c1-250 | head -4; done
  timeout 90 build/kite-bench --check-dispatch --variants >"$OUT/check_dispatch.txt" 2>&1
  echo "check-dispatch: rc=$?"; tail -1 "$OUT/check_dispatch.txt"
  timeout 90 build/kite-bench gemm --check-dispatch >"$OUT/check_dispatch_gemm.txt" 2>&1
  echo "gemm check-dispatch: rc=$?"; grep "^check-dispatch" "$OUT/check_dispatch_gemm.txt"
  PYTHONUNBUFFERED=1 timeout $(( $(left) )) python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -20 "$OUT/vs_torch.txt"
}

# Session 6, third call: the row ops tuned again on the finer N grid (the
# gemm lines of the committed tsv kept), the table regenerated, its row rules
# tested, then the held-out checks.
retune6() {
  left() { echo $(( 585 - ($(date +%s) - T0) )); }
  local t0=$(date +%s)
  timeout $(( $(left) - 170 )) build/kite-bench --tune /tmp/rows.tsv >"$OUT/tune_rows.log" 2>&1
  echo "row tune: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "^tune:" "$OUT/tune_rows.log" | tail -3
  { cat /tmp/rows.tsv; grep '^gemm' bench/tuned/h200.tsv; } >/tmp/h200.tsv && cp /tmp/h200.tsv bench/tuned/h200.tsv
  cp bench/tuned/h200.tsv "$OUT/"
  echo "tsv: $(grep -cv '^#' bench/tuned/h200.tsv) lines, $(grep -c 'failed' bench/tuned/h200.tsv) failed"
  { make gen KITE_GPU=h200 && make -j16 build test-bins build/kite-bench; } >"$OUT/regen.log" 2>&1
  echo "regenerated: rc=$?"; grep -E "kite-gen:|rror" "$OUT/regen.log" | head -3
  CK_RUN_CASE=tuned timeout 100 build/test_gpu >"$OUT/tuned_rows.log" 2>&1
  echo "test_gpu tuned: rc=$? $(grep -E '^[0-9]+%: Checks' "$OUT/tuned_rows.log")"; grep -E ":[EF]:" "$OUT/tuned_rows.log" | head -3
  timeout 90 build/kite-bench --check-dispatch --variants >"$OUT/check_dispatch.txt" 2>&1
  echo "check-dispatch: rc=$?"; tail -1 "$OUT/check_dispatch.txt"
  timeout $(( $(left) )) build/kite-bench gemm --check-dispatch >"$OUT/check_dispatch_gemm.txt" 2>&1
  echo "gemm check-dispatch: rc=$?"; grep "^check-dispatch" "$OUT/check_dispatch_gemm.txt"
}

# Session 8: the occ/hint rows (one CTA more per SM, .cs loads and stores)
# tested and timed at 1024 and 16384, the row tune (committed gemm lines
# kept), the table, its row rules tested, torch.compile on rmsnorm and softmax.
tune8() {
  left() { echo $(( 585 - ($(date +%s) - T0) )); }
  local t0=$(date +%s) pat f
  for pat in "*_o1*" "*_cs"; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="$pat" timeout 150 build/test_gpu >"$OUT/tweak$(echo "$pat" | tr -d '*').log" 2>&1 &
  done
  wait
  echo "occ/hint variants tested: $(( $(date +%s) - t0 )) s"
  cat "$OUT"/tweak*.log | grep -E "^[0-9]+%: Checks" | awk '{ c += $3; f += $5; e += $7 } END { printf "  %d checks, %d failures, %d errors\n", c, f, e }'
  cat "$OUT"/tweak*.log | grep -E ":[EF]:" | cut -c1-250 | head -5
  timeout 90 build/kite-bench --variants --op rmsnorm,softmax --n 1024,16384 >"$OUT/variants.txt" 2>&1
  echo "variants: rc=$?"
  for f in "rmsnorm 1024" "rmsnorm 16384" "softmax 1024" "softmax 16384"; do   # the fastest five (TB/s first)
    awk -v k="$f" '$1 " " $4 == k && NF >= 9 { print $(NF-2), $0 }' "$OUT/variants.txt" | sort -g -r | head -5 | cut -c1-150
  done
  t0=$(date +%s)
  timeout $(( $(left) - 200 )) build/kite-bench --tune /tmp/rows.tsv --times /tmp/rows.times.tsv >"$OUT/tune_rows.log" 2>&1
  echo "row tune: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "^tune:" "$OUT/tune_rows.log" | tail -2
  if [ -s /tmp/rows.tsv ] && [ -s /tmp/rows.times.tsv ]; then
    { cat /tmp/rows.tsv; grep '^gemm' bench/tuned/h200.tsv; } >/tmp/h200.tsv
    { cat /tmp/rows.times.tsv; grep '^gemm' bench/tuned/h200.times.tsv; } >/tmp/h200.times.tsv
    cp /tmp/h200.tsv bench/tuned/h200.tsv; cp /tmp/h200.times.tsv bench/tuned/h200.times.tsv
    cp bench/tuned/h200.tsv bench/tuned/h200.times.tsv "$OUT/"
  fi
  echo "tsv: $(grep -cv '^#' bench/tuned/h200.tsv) lines, $(grep -c failed bench/tuned/h200.tsv) failed"
  grep -E "^rmsnorm\sbf16\sbf16\s[0-9]+\s(1024|16384)\s|^softmax\sbf16\sbf16\s[0-9]+\s(1024|16384)\s" bench/tuned/h200.tsv | cut -f5,7,8,9,10
  { make gen KITE_GPU=h200 && make -j16 build test-bins build/kite-bench; } >"$OUT/regen.log" 2>&1
  echo "regenerated: rc=$?"; grep -E "kite-gen:|rror" "$OUT/regen.log" | head -3
  CK_RUN_CASE=tuned timeout 100 build/test_gpu >"$OUT/tuned_rows.log" 2>&1
  echo "test_gpu tuned: rc=$? $(grep -E '^[0-9]+%: Checks' "$OUT/tuned_rows.log")"; grep -E ":[EF]:" "$OUT/tuned_rows.log" | head -3
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/vs_torch.py --op rmsnorm,softmax --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -14 "$OUT/vs_torch.txt"
}

# Session 8, second build: the cluster rows tested (variants and longest rows,
# three processes), their SASS free of local memory, every variant timed
# at N = 16384 ... 262144 (three ops), then the row tune (committed gemm
# lines kept) if the call has room; the tsv files come back in $OUT.
clus8() {
  left() { echo $(( 585 - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt f
  for dt in bf16 f16 f32; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="*_${dt}_*_x*" timeout 150 build/test_gpu >"$OUT/clus_$dt.log" 2>&1 &
  done
  CK_RUN_CASE=huge KITE_TEST_ONLY="*_x*" timeout 150 build/test_gpu >"$OUT/clus_huge.log" 2>&1 &
  wait
  echo "cluster variants tested: $(( $(date +%s) - t0 )) s"
  cat "$OUT"/clus_*.log | grep -E "^[0-9]+%: Checks" | awk '{ c += $3; f += $5; e += $7 } END { printf "  %d checks, %d failures, %d errors\n", c, f, e }'
  cat "$OUT"/clus_*.log | grep -E ":[EF]:" | cut -c1-250 | head -8
  for f in build/obj/*/*_x*.o; do
    cuobjdump --dump-sass "$f" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "$f"
  done >/tmp/clus_ldl.txt
  echo "cluster objects with LDL/STL: $(wc -l </tmp/clus_ldl.txt) of $(ls build/obj/*/*_x*.o | wc -l)"
  cuobjdump --dump-sass build/obj/rmsnorm/rmsnorm_bf16_reg_t512_r1_n4_v16_c0_p1_x8.o 2>/dev/null \
    | grep -oE "(UCGABAR_ARV|UCGABAR_WAIT|CCTL[.A-Z]*|ST\.E[.A-Z0-9]*|STS[.0-9]*|MEMBAR[.A-Z]*|LDG[.A-Z0-9]*)" | sort | uniq -c | head -12
  timeout 120 build/kite-bench --variants --op all --n 16384,32768,65536,131072,262144 >"$OUT/variants.txt" 2>&1
  echo "variants: rc=$?"
  for f in "rmsnorm 32768" "rmsnorm 65536" "rmsnorm 131072" "rmsnorm 262144" "softmax 65536" "softmax 262144" \
           "cross_entropy 65536" "cross_entropy 262144"; do   # dispatched, then the fastest three
    awk -v k="$f" '$1 " " $4 == k && $5 == "=" { print "    ", $0 }' "$OUT/variants.txt" | cut -c1-150
    awk -v k="$f" '$1 " " $4 == k && NF >= 9 && $5 != "=" { print $(NF-2), $0 }' "$OUT/variants.txt" | sort -g -r | head -3 | cut -c1-150
  done
  if [ "$(left)" -gt 300 ]; then
    t0=$(date +%s)
    timeout $(( $(left) - 10 )) build/kite-bench --tune /tmp/rows.tsv --times /tmp/rows.times.tsv >"$OUT/tune_rows.log" 2>&1
    echo "row tune: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "^tune:" "$OUT/tune_rows.log" | tail -2
    if [ -s /tmp/rows.tsv ] && [ -s /tmp/rows.times.tsv ]; then
      { cat /tmp/rows.tsv; grep '^gemm' bench/tuned/h200.tsv; } >"$OUT/h200.tsv"
      { cat /tmp/rows.times.tsv; grep '^gemm' bench/tuned/h200.times.tsv; } >"$OUT/h200.times.tsv"
      echo "tsv: $(grep -cv '^#' "$OUT/h200.tsv") lines, $(grep -c failed "$OUT/h200.tsv") failed"
    fi
  else
    echo "no room for the row tune ($(left) s left)"
  fi
}

# Session 8, the pipelined cluster rows: tested, the row tune (its files in
# $OUT first), the table regenerated here and its row rules tested, then
# torch.compile at the long rows while the call has time.
clus8b() {
  left() { echo $(( ${KITE_CALL_S:-585} - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt
  for dt in bf16 f16 f32; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="*_${dt}_*_p2_x*" timeout 100 build/test_gpu >"$OUT/clusp_$dt.log" 2>&1 &
  done
  CK_RUN_CASE=huge KITE_TEST_ONLY="*_p2_x*" timeout 100 build/test_gpu >"$OUT/clusp_huge.log" 2>&1 &
  wait
  echo "pipelined cluster variants tested: $(( $(date +%s) - t0 )) s"
  cat "$OUT"/clusp_*.log | grep -E "^[0-9]+%: Checks" | awk '{ c += $3; f += $5; e += $7 } END { printf "  %d checks, %d failures, %d errors\n", c, f, e }'
  cat "$OUT"/clusp_*.log | grep -E ":[EF]:" | cut -c1-250 | head -8
  t0=$(date +%s)
  timeout $(( $(left) - 60 )) build/kite-bench --tune /tmp/rows.tsv --times /tmp/rows.times.tsv >"$OUT/tune_rows.log" 2>&1
  echo "row tune: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "^tune:" "$OUT/tune_rows.log" | tail -1
  [ -s /tmp/rows.tsv ] && [ -s /tmp/rows.times.tsv ] || return
  { cat /tmp/rows.tsv; grep '^gemm' bench/tuned/h200.tsv; } >"$OUT/h200.tsv"
  { cat /tmp/rows.times.tsv; grep '^gemm' bench/tuned/h200.times.tsv; } >"$OUT/h200.times.tsv"
  echo "tsv: $(grep -cv '^#' "$OUT/h200.tsv") lines, $(grep -c failed "$OUT/h200.tsv") failed"
  grep -E "^(rmsnorm|softmax|cross_entropy)\sbf16\sbf16\s[0-9]+\s(65536|131072|262144)\s" "$OUT/h200.tsv" | cut -f1,5,7,8,10
  cp "$OUT/h200.tsv" "$OUT/h200.times.tsv" bench/tuned/
  { make gen KITE_GPU=h200 && make -j16 build test-bins build/kite-bench; } >"$OUT/regen.log" 2>&1
  echo "regenerated: rc=$?"
  CK_RUN_CASE=tuned timeout 60 build/test_gpu >"$OUT/tuned_rows.log" 2>&1
  echo "test_gpu tuned: rc=$? $(grep -E '^[0-9]+%: Checks' "$OUT/tuned_rows.log")"; grep -E ":[EF]:" "$OUT/tuned_rows.log" | head -3
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/vs_torch.py --n 65536,131072,262144 \
    --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -12 "$OUT/vs_torch.txt"
}

# Session 8, last call on the committed table: its row rules tested, the
# held-out checks (rows, gemm), kite_gemm's overhead, torch.compile.
check8() {
  left() { echo $(( 585 - ($(date +%s) - T0) )); }
  CK_RUN_CASE=tuned timeout 150 build/test_gpu >"$OUT/tuned_rows.log" 2>&1
  echo "test_gpu tuned: rc=$? $(grep -E '^[0-9]+%: Checks' "$OUT/tuned_rows.log")"; grep -E ":[EF]:" "$OUT/tuned_rows.log" | head -3
  timeout 60 build/kite-bench gemm --overhead >"$OUT/overhead.txt" 2>&1; echo "overhead rc=$?"; cat "$OUT/overhead.txt"
  timeout 110 build/kite-bench gemm --check-dispatch >"$OUT/check_dispatch_gemm.txt" 2>&1
  echo "gemm check-dispatch: rc=$?"; grep "^check-dispatch" "$OUT/check_dispatch_gemm.txt"
  timeout 90 build/kite-bench --check-dispatch --variants >"$OUT/check_dispatch.txt" 2>&1
  echo "check-dispatch: rc=$?"; tail -1 "$OUT/check_dispatch.txt"
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/vs_torch.py --n 1024,4096,16384,65536,131072,262144 \
    --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -22 "$OUT/vs_torch.txt"
}

# Next session, first call: the whole tune (rows and gemm, with every
# variant's time: bench/tuned/h200.tsv and h200.times.tsv come back in $OUT;
# commit them, make gen, then the "checktable" stage).
tuneall() {
  local t0=$(date +%s)
  timeout $(( 585 - ($(date +%s) - T0) )) make tune KITE_GPU=h200 >"$OUT/tune.log" 2>&1
  echo "make tune: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "tune:" "$OUT/tune.log" | tail -4
  cp bench/tuned/h200.tsv bench/tuned/h200.times.tsv "$OUT/"
  echo "tsv: $(grep -cv '^#' bench/tuned/h200.tsv) lines, $(grep -c failed bench/tuned/h200.tsv) failed;" \
       "times: $(grep -cv '^#' bench/tuned/h200.times.tsv) lines"
}

# Second call, on the committed table: its rules and models tested, the
# held-out checks, kite_gemm's overhead, torch.compile.
tune7() {
  local t0=$(date +%s) dt
  for dt in bf16 f16 f32; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="rmsnorm_${dt}_reg_*" timeout 120 build/test_gpu >"$OUT/rms_$dt.log" 2>&1 &
  done
  wait
  echo "rmsnorm reg variants: $(( $(date +%s) - t0 )) s"
  cat "$OUT"/rms_*.log | grep -E "^[0-9]+%: Checks" | awk '{ c += $3; f += $5; e += $7 } END { printf "  %d checks, %d failures, %d errors\n", c, f, e }'
  cat "$OUT"/rms_*.log | grep -E ":[EF]:" | cut -c1-250 | head -5
  tuneall
}
check7() {
  left() { echo $(( 585 - ($(date +%s) - T0) )); }
  timeout 100 build/kite-bench --check-dispatch --variants >"$OUT/check_dispatch.txt" 2>&1
  echo "check-dispatch: rc=$?"; tail -1 "$OUT/check_dispatch.txt"
  grep -E "^(rmsnorm|softmax|cross_entropy) " "$OUT/check_dispatch.txt" | sort -k7 -n -r | head -4
  timeout 110 build/kite-bench gemm --check-dispatch >"$OUT/check_dispatch_gemm.txt" 2>&1
  echo "gemm check-dispatch: rc=$?"; grep "^check-dispatch" "$OUT/check_dispatch_gemm.txt"
  timeout 40 build/kite-bench gemm --overhead >"$OUT/overhead.txt" 2>&1; echo "overhead rc=$?"; tail -6 "$OUT/overhead.txt"
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -20 "$OUT/vs_torch.txt"
}
check7b() {
  left() { echo $(( 585 - ($(date +%s) - T0) )); }
  local s
  for s in "" "--aligned --seed 7" "--aligned --seed 11"; do
    timeout 100 build/kite-bench --check-dispatch --variants $s >"$OUT/check_dispatch$(echo $s | tr -d ' -').txt" 2>&1
    echo "check-dispatch $s: rc=$?"; tail -1 "$OUT/check_dispatch$(echo $s | tr -d ' -').txt"
  done
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -20 "$OUT/vs_torch.txt"
}
checktable() {
  left() { echo $(( 580 - ($(date +%s) - T0) )); }
  CK_RUN_CASE=tuned timeout 150 build/test_gpu >"$OUT/tuned_rows.log" 2>&1 &
  CK_RUN_CASE=tuned timeout 250 build/test_gemm >"$OUT/tuned_gemm.log" 2>&1 &
  wait
  for f in tuned_rows tuned_gemm; do echo "$f: $(grep -E '^[0-9]+%: Checks' "$OUT/$f.log")"; grep -E ":[EF]:" "$OUT/$f.log" | cut -c1-250 | head -4; done
  timeout 40 build/kite-bench gemm --overhead >"$OUT/overhead.txt" 2>&1; echo "overhead rc=$?"; cat "$OUT/overhead.txt"
  timeout 90 build/kite-bench --check-dispatch --variants >"$OUT/check_dispatch.txt" 2>&1
  echo "check-dispatch: rc=$?"; tail -1 "$OUT/check_dispatch.txt"
  timeout 100 build/kite-bench gemm --check-dispatch >"$OUT/check_dispatch_gemm.txt" 2>&1
  echo "gemm check-dispatch: rc=$?"; grep "^check-dispatch" "$OUT/check_dispatch_gemm.txt"
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -20 "$OUT/vs_torch.txt"
}

# Session 5: every bf16 row variant up to 16384, quickly, for ranking.
rowsquick() {
  timeout 300 build/kite-bench --quick --variants --n 1024,2048,4096,8192,16384 >"$OUT/variants.txt" 2>&1
  echo "kite-bench --variants rc=$? ($(( $(date +%s) - T0 )) s)"
  grep -E " [=*] " "$OUT/variants.txt" | awk '{ printf "%-14s %6s %s %-48s %8s %6s\n", $1, $4, $5, $6, $7, $8 }'
}

# Session 9: rmsnorm_bwd's first GPU run: test_norm (variants by dtype, the
# entry point, central differences, invalid calls) beside test_gpu's backward
# variants, its SASS, its variants timed, torch.compile, then the backward
# ops' own tune (bwd*.tsv in $OUT).
norm9() {
  left() { echo $(( 585 - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt c
  for dt in bf16 f16 f32; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="rmsnorm_bwd_${dt}_*" timeout 200 build/test_norm >"/tmp/norm.$dt.log" 2>&1 &
  done
  for c in entry diff invalid; do CK_RUN_CASE=$c timeout 200 build/test_norm >"/tmp/norm.$c.log" 2>&1 & done
  wait
  cat /tmp/norm.*.log >"$OUT/test_norm.log"
  echo "test_norm in 6 processes: $(( $(date +%s) - t0 )) s"
  grep -E "^[0-9]+%: Checks" "$OUT/test_norm.log" | awk '{ c += $3; f += $5; e += $7 } END { printf "  %d checks, %d failures, %d errors\n", c, f, e }'
  grep -E ":[EF]:|crashed" "$OUT/test_norm.log" | cut -c1-300 | head -8
  grep -E "worst error" "$OUT/test_norm.log" | sort -t' ' -k1,1 | awk '{ print }' | cut -c1-160 | head -60 >"$OUT/test_norm_worst.txt"
  for f in build/obj/rmsnorm_bwd/*.o; do
    cuobjdump --dump-sass "$f" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "$f"
  done >/tmp/nb_ldl.txt
  echo "rmsnorm_bwd objects with LDL/STL: $(wc -l </tmp/nb_ldl.txt) of $(ls build/obj/rmsnorm_bwd/*.o | wc -l)"
  timeout 100 build/kite-bench --variants --op rmsnorm_bwd --n 1024,4096,16384,65536,262144 >"$OUT/variants_nbwd.txt" 2>&1
  echo "rmsnorm_bwd variants: rc=$? ($(left) s left)"
  for f in 1024 4096 16384 65536 262144; do
    awk -v k="rmsnorm_bwd $f" '$1 " " $4 == k && NF >= 9 { print $(NF-2), $0 }' "$OUT/variants_nbwd.txt" | sort -g -r | head -3 | cut -c1-150
  done
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/vs_torch.py --op rmsnorm_bwd --n 1024,4096,16384,65536,131072,262144 \
    --csv "$OUT/vs_torch_nbwd.csv" >"$OUT/vs_torch_nbwd.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -10 "$OUT/vs_torch_nbwd.txt"
}

measure9() {
  left() { echo $(( 585 - ($(date +%s) - T0) )); }
  timeout 100 build/kite-bench --variants --op softmax_bwd,cross_entropy_bwd --n 4096,16384,65536,262144 \
    >"$OUT/variants_bwd.txt" 2>&1
  echo "bwd variants: rc=$? ($(left) s left)"
  for f in "softmax_bwd 4096" "softmax_bwd 65536" "cross_entropy_bwd 4096" "cross_entropy_bwd 65536" "cross_entropy_bwd 262144"; do
    awk -v k="$f" '$1 " " $4 == k && NF >= 9 { print $(NF-2), $0 }' "$OUT/variants_bwd.txt" | sort -g -r | head -3 | cut -c1-150
  done
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/vs_torch.py --op softmax_bwd,cross_entropy_bwd --n 1024,4096,16384,65536,131072,262144 \
    --csv "$OUT/vs_torch_bwd.csv" >"$OUT/vs_torch_bwd.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -16 "$OUT/vs_torch_bwd.txt"
  local t0=$(date +%s)
  timeout $(( $(left) - 5 )) build/kite-bench --tune /tmp/bwd.tsv --times /tmp/bwd.times.tsv \
    --op softmax_bwd,cross_entropy_bwd,rmsnorm_bwd >"$OUT/tune_bwd.log" 2>&1
  echo "bwd tune: rc=$?, $(( $(date +%s) - t0 )) s"; grep -E "^tune:" "$OUT/tune_bwd.log" | tail -2
  cp /tmp/bwd.tsv /tmp/bwd.times.tsv "$OUT/" 2>/dev/null
}

# Session 9, last call: the mended kernels and tests (test_norm whole, the
# test_gpu partitions that changed) beside each other, then the backward ops
# and rmsnorm against torch.compile; everything also goes to $OUT/summary.txt
# so that a call cut short still says what it saw.
final9() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt c
  for dt in bf16 f16 f32; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="rmsnorm_*_${dt}_*" timeout 200 build/test_norm >"/tmp/norm.$dt.log" 2>&1 &
    CK_RUN_CASE=variants KITE_TEST_ONLY="rmsnorm_${dt}_*" timeout 200 build/test_gpu >"/tmp/gpu.rms.$dt.log" 2>&1 &
  done
  for c in entry diff invalid res_entry res_invalid; do CK_RUN_CASE=$c timeout 200 build/test_norm >"/tmp/norm.$c.log" 2>&1 & done
  CK_RUN_CASE=variants KITE_TEST_ONLY="softmax_bwd_f16_*" timeout 200 build/test_gpu >/tmp/gpu.sbf16.log 2>&1 &
  for c in targets invalid entry; do CK_RUN_CASE=$c timeout 200 build/test_gpu >"/tmp/gpu.$c.log" 2>&1 & done
  CK_RUN_CASE=huge KITE_TEST_ONLY="softmax_bwd_f16_*" timeout 200 build/test_gpu >/tmp/gpu.huge.log 2>&1 &
  wait
  cat /tmp/norm.*.log >"$OUT/test_norm.log"; cat /tmp/gpu.*.log >"$OUT/test_gpu.log"
  { echo "tests: $(( $(date +%s) - t0 )) s ($(left) s left)"
    for f in test_norm test_gpu; do
      grep -E "^[0-9]+%: Checks" "$OUT/$f.log" | awk -v f=$f '{ c += $3; x += $5; e += $7 } END { printf "%s: %d checks, %d failures, %d errors\n", f, c, x, e }'
      grep -E ":[EF]:|crashed|FAILED" "$OUT/$f.log" | cut -c1-260 | head -6
    done
    grep -E "worst error" "$OUT/test_norm.log" | sort -k6 -g -r | head -3 | cut -c1-200; } | tee -a "$OUT/summary.txt"
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/vs_torch.py --op rmsnorm_bwd,softmax_bwd,cross_entropy_bwd \
    --n 1024,4096,16384,65536,131072,262144 --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -A40 "^op  " "$OUT/vs_torch.txt" | head -40; } | tee -a "$OUT/summary.txt"
}

# Session 10 (branch issue5-layernorm): layernorm's first GPU run: its variants
# by dtype, entry and invalid cases, then torch.compile (summary.txt in $OUT).
ln10() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt c
  for dt in bf16 f16 f32; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="layernorm_${dt}_*" timeout 200 build/test_norm >"/tmp/ln.$dt.log" 2>&1 &
  done
  for c in ln_entry ln_invalid; do CK_RUN_CASE=$c timeout 200 build/test_norm >"/tmp/ln.$c.log" 2>&1 & done
  wait
  cat /tmp/ln.*.log >"$OUT/test_ln.log"
  { echo "layernorm tests: $(( $(date +%s) - t0 )) s"
    grep -E "^[0-9]+%: Checks" "$OUT/test_ln.log" | awk '{ c += $3; x += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, x, e }'
    grep -E ":[EF]:|crashed" "$OUT/test_ln.log" | cut -c1-260 | head -6; } | tee -a "$OUT/summary.txt"
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/vs_torch.py --op layernorm \
    --n 1024,4096,16384,65536,131072,262144 --csv "$OUT/vs_torch_ln.csv" >"$OUT/vs_torch_ln.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -A10 "^op  " "$OUT/vs_torch_ln.txt"; } | tee -a "$OUT/summary.txt"
}

# Session 10, first call: layernorm's first GPU run (ln10), SASS of the new
# row ops' objects (LDL/STL, in parallel), then each backward op's tune in its
# own file (a tune cut short loses only its op); summary.txt in $OUT.
first10() {
  ln10
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local o op
  ls build/obj/{layernorm,rmsnorm_bwd,rmsnorm_res,softmax_bwd,cross_entropy_bwd}/*.o 2>/dev/null >/tmp/new_objs.txt
  xargs -P 16 -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "{}"' \
    </tmp/new_objs.txt >/tmp/new_ldl.txt
  { echo "new row objects with LDL/STL in SASS: $(wc -l </tmp/new_ldl.txt) of $(wc -l </tmp/new_objs.txt) ($(left) s left)"
    head -5 /tmp/new_ldl.txt; } | tee -a "$OUT/summary.txt"
  for op in softmax_bwd cross_entropy_bwd rmsnorm_bwd; do
    [ "$(left)" -gt 40 ] || break
    local t0=$(date +%s)
    timeout $(( $(left) - 10 )) build/kite-bench --tune "$OUT/bwd.$op.tsv" --times "$OUT/bwd.$op.times.tsv" --op $op \
      >"$OUT/tune.$op.log" 2>&1
    echo "tune $op: rc=$?, $(( $(date +%s) - t0 )) s ($(left) s left)" | tee -a "$OUT/summary.txt"
  done
}

# The row tune of each op named, each into its own file in $OUT (a tune cut
# short loses only its op), their lines put in bench/tuned/h200*.tsv in place
# of the ops' old ones (both files come back in $OUT), the table regenerated
# and libkite.so and kite-bench rebuilt; what it did goes to summary.txt.
tune_merge() {
  local op f t0
  for op in "$@"; do
    t0=$(date +%s)
    timeout 120 build/kite-bench --tune "$OUT/tune.$op.tsv" --times "$OUT/tune.$op.times.tsv" --op $op >"$OUT/tune.$op.log" 2>&1
    echo "tune $op: rc=$?, $(( $(date +%s) - t0 )) s ($(left) s left)" | tee -a "$OUT/summary.txt"
  done
  local alt=$(IFS='|'; echo "$*")
  for f in h200.tsv h200.times.tsv; do
    { grep -vP "^($alt)\t" bench/tuned/$f
      for op in "$@"; do grep -hvP '^(#|op\t)' "$OUT/tune.$op.${f#h200.}"; done; } >/tmp/$f
    cp /tmp/$f bench/tuned/$f; cp /tmp/$f "$OUT/$f"
  done
  t0=$(date +%s)
  { make gen KITE_GPU=h200 && make -j16 build/libkite.so build/kite-bench; } >"$OUT/regen.log" 2>&1
  echo "table regenerated: rc=$?, $(( $(date +%s) - t0 )) s; $(grep -E 'kite-gen:' "$OUT/regen.log")" | tee -a "$OUT/summary.txt"
}

# Session 10, second call: layernorm_bwd's first GPU run, with what changed
# beside it (rmsnorm_bwd's partial rows, layernorm's rows of four accesses and
# clusters, softmax_bwd's cluster rows): their tests, SASS; three tunes, their
# lines put in the table here (bench/tuned/h200*.tsv come back in $OUT); then
# torch.compile through the tuned table, the new ops first; summary.txt in $OUT.
second10() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt c op
  for dt in bf16 f16 f32; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="layernorm_*${dt}_*" timeout 200 build/test_norm >"/tmp/t2.ln.$dt.log" 2>&1 &
    CK_RUN_CASE=variants KITE_TEST_ONLY="rmsnorm_bwd_${dt}_*" timeout 200 build/test_norm >"/tmp/t2.rb.$dt.log" 2>&1 &
    CK_RUN_CASE=variants KITE_TEST_ONLY="softmax_bwd_${dt}_*_x*" timeout 200 build/test_gpu >"/tmp/t2.sbx.$dt.log" 2>&1 &
  done
  for c in entry diff invalid ln_entry ln_invalid lnb_entry lnb_diff lnb_invalid; do
    CK_RUN_CASE=$c timeout 200 build/test_norm >"/tmp/t2.$c.log" 2>&1 &
  done
  wait
  cat /tmp/t2.*.log >"$OUT/tests.log"
  ls build/obj/{layernorm,layernorm_bwd,rmsnorm_bwd,softmax_bwd}/*.o >/tmp/new_objs.txt
  xargs -P 16 -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "{}"' \
    </tmp/new_objs.txt >/tmp/new_ldl.txt
  { echo "tests: $(( $(date +%s) - t0 )) s"
    grep -E "^[0-9]+%: Checks" "$OUT/tests.log" | awk '{ c += $3; x += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, x, e }'
    grep -E ":[EF]:|crashed" "$OUT/tests.log" | cut -c1-300 | head -8
    grep -E "worst error" "$OUT/tests.log" | sort -k6 -g -r | head -2 | cut -c1-200
    echo "objects with LDL/STL in SASS: $(wc -l </tmp/new_ldl.txt) of $(wc -l </tmp/new_objs.txt)"
    head -5 /tmp/new_ldl.txt; } | tee -a "$OUT/summary.txt"
  tune_merge layernorm_bwd layernorm softmax_bwd
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/vs_torch.py \
    --op layernorm_bwd,layernorm,softmax_bwd,rmsnorm_bwd,cross_entropy_bwd \
    --n 1024,4096,16384,65536,131072,262144 --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -E "^(layernorm|softmax|rmsnorm|cross|geomean|MISMATCH|ERROR)" "$OUT/vs_torch.txt" | head -40; } | tee -a "$OUT/summary.txt"
}

# Session 10, last call: the partial-sum ops' cluster rows (rmsnorm_bwd,
# layernorm_bwd) and their changed launcher tested, SASS; their tunes, the
# table regenerated here (bench/tuned/h200*.tsv in $OUT); torch.compile; then
# ncu on layernorm's forward beside rmsnorm's (same row shape) for the next
# session; summary.txt in $OUT.
final10() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt c op f
  for dt in bf16 f16 f32; do
    for op in rmsnorm_bwd layernorm_bwd; do
      CK_RUN_CASE=variants KITE_TEST_ONLY="${op}_${dt}_*" timeout 240 build/test_norm >"/tmp/t3.$op.$dt.log" 2>&1 &
    done
  done
  for c in entry diff invalid lnb_entry lnb_diff lnb_invalid; do
    CK_RUN_CASE=$c timeout 240 build/test_norm >"/tmp/t3.$c.log" 2>&1 &
  done
  ls build/obj/{layernorm_bwd,rmsnorm_bwd}/*.o >/tmp/new_objs.txt
  xargs -P 4 -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "{}"' \
    </tmp/new_objs.txt >/tmp/new_ldl.txt
  wait
  cat /tmp/t3.*.log >"$OUT/tests.log"
  { echo "tests: $(( $(date +%s) - t0 )) s ($(left) s left)"
    grep -E "^[0-9]+%: Checks" "$OUT/tests.log" | awk '{ c += $3; x += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, x, e }'
    grep -E ":[EF]:|crashed" "$OUT/tests.log" | cut -c1-300 | head -8
    grep -E "worst error" "$OUT/tests.log" | sort -k6 -g -r | head -2 | cut -c1-200
    echo "objects with LDL/STL in SASS: $(wc -l </tmp/new_ldl.txt) of $(wc -l </tmp/new_objs.txt)"
    head -5 /tmp/new_ldl.txt; } | tee -a "$OUT/summary.txt"
  tune_merge rmsnorm_bwd layernorm_bwd
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 60 )) python3 bench/vs_torch.py --op rmsnorm_bwd,layernorm_bwd \
    --n 1024,4096,16384,65536,131072,262144 --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -E "^(layernorm|rmsnorm|geomean|MISMATCH|ERROR)" "$OUT/vs_torch.txt" | head -20; } | tee -a "$OUT/summary.txt"
  for op in layernorm rmsnorm; do   # both dispatch t32_r4_n4 at N = 1024: 2.4 v. 3.8 TB/s
    [ "$(left)" -gt 25 ] || break
    timeout 25 ncu -k regex:${op}_fwd --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats build/kite-bench --op $op --n 1024 --quick >"$OUT/ncu.$op.txt" 2>&1
    { echo "ncu $op: rc=$?"; grep -E "Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Block Limit" "$OUT/ncu.$op.txt" | head -16; } | tee -a "$OUT/summary.txt"
  done
}

# Branch issue5-ln-floats: layernorm's forward converting x once: every
# layernorm variant tested, SASS, its tune into the table, torch.compile, and
# ncu beside rmsnorm's same variant (summary.txt in $OUT).
ln11() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt c
  for dt in bf16 f16 f32; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="layernorm_${dt}_*" timeout 200 build/test_norm >"/tmp/l11.$dt.log" 2>&1 &
  done
  for c in ln_entry ln_invalid lnb_diff; do CK_RUN_CASE=$c timeout 200 build/test_norm >"/tmp/l11.$c.log" 2>&1 & done
  ls build/obj/layernorm/*.o >/tmp/new_objs.txt
  xargs -P 4 -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "{}"' \
    </tmp/new_objs.txt >/tmp/new_ldl.txt
  wait
  cat /tmp/l11.*.log >"$OUT/tests.log"
  { echo "tests: $(( $(date +%s) - t0 )) s ($(left) s left)"
    grep -E "^[0-9]+%: Checks" "$OUT/tests.log" | awk '{ c += $3; x += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, x, e }'
    grep -E ":[EF]:|crashed" "$OUT/tests.log" | cut -c1-300 | head -8
    echo "objects with LDL/STL in SASS: $(wc -l </tmp/new_ldl.txt) of $(wc -l </tmp/new_objs.txt)"; } | tee -a "$OUT/summary.txt"
  tune_merge layernorm
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 40 )) python3 bench/vs_torch.py --op ${KITE_VS_OPS:-layernorm,rmsnorm} \
    --n 1024,4096,16384,65536,131072,262144 --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -E "^(layernorm|rmsnorm|geomean|MISMATCH|ERROR)" "$OUT/vs_torch.txt" | head -20; } | tee -a "$OUT/summary.txt"
  timeout 25 ncu -k regex:layernorm_fwd --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    build/kite-bench --op layernorm --n 1024 --quick >"$OUT/ncu.layernorm.txt" 2>&1
  { echo "ncu layernorm: rc=$?"; grep -E "Duration|DRAM Throughput|Warp Cycles Per Issued" "$OUT/ncu.layernorm.txt"; } | tee -a "$OUT/summary.txt"
}

# Session 11, second call: why layernorm's rows of two warps take five times
# rmsnorm's (reg_t64_r2_n2 at 1024: 352 against 72 us): ncu with source
# counters on both and on layernorm's t32_r4_n4, their SASS into $OUT; then the
# partial-sum ops retuned on at least 1024 rows into the table, torch.compile.
probe11() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local v op
  for v in layernorm_bf16_reg_t64_r2_n2_v16_c0_p1 rmsnorm_bf16_reg_t64_r2_n2_v16_c0_p1 layernorm_bf16_reg_t32_r4_n4_v16_c0_p1; do
    op=${v%%_bf16*}
    timeout 40 ncu --kernel-name-base mangled -k regex:${v}_cu --launch-skip 2 --launch-count 1 --set full \
      --import-source no --print-details all build/kite-bench --op $op --n 1024 --quick --variants >"$OUT/ncu.$v.txt" 2>&1
    { echo "ncu $v: rc=$?"; grep -E "Grid Size|Block Size|Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Shared Memory Configuration Size|Block Limit|Executed Instructions  |Warp Cycles Per Issued|Issue Slots Busy" "$OUT/ncu.$v.txt" | head -20; } | tee -a "$OUT/summary.txt"
    cuobjdump --dump-sass build/obj/$op/$v.o >"$OUT/sass.$v.txt" 2>&1
  done
  tune_merge rmsnorm_bwd layernorm_bwd softmax_bwd
  rm -f "$OUT"/tune.*.tsv   # merged into $OUT/h200*.tsv: fewer files to bring back
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/vs_torch.py --op rmsnorm_bwd,layernorm_bwd,softmax_bwd,rmsnorm,softmax,cross_entropy \
    --n 1024,4096,16384,65536,131072,262144 --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -E "^(layernorm|rmsnorm|softmax|cross|geomean|MISMATCH|ERROR)" "$OUT/vs_torch.txt" | grep -v "N=" | head -60; } | tee -a "$OUT/summary.txt"
}

# Session 11, last call: layernorm's w and b copied through L1 (cp.async.ca):
# its variants tested, SASS, its tune into the table, torch.compile beside
# rmsnorm in the same run (summary.txt in $OUT).
ln12() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt m c op
  for dt in bf16 f16 f32; do
    for m in reg loop; do
      CK_RUN_CASE=variants KITE_TEST_ONLY="layernorm_${dt}_${m}_*" timeout ${KITE_TEST_S:-150} build/test_norm \
        >"/tmp/c12.$dt.$m.log" 2>&1 &
    done
    CK_RUN_CASE=variants KITE_TEST_ONLY="layernorm_bwd_${dt}_*" timeout ${KITE_TEST_S:-150} build/test_norm \
      >"/tmp/c12.b.$dt.log" 2>&1 &
  done
  for c in ln_entry ln_invalid lnb_entry lnb_diff lnb_invalid; do
    CK_RUN_CASE=$c timeout ${KITE_TEST_S:-150} build/test_norm >"/tmp/c12.$c.log" 2>&1 &
  done
  ls build/obj/layernorm*/*.o >/tmp/new_objs.txt
  xargs -P 4 -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "{}"' \
    </tmp/new_objs.txt >/tmp/new_ldl.txt
  wait
  cat /tmp/c12.*.log >"$OUT/tests.log"
  { echo "tests: $(( $(date +%s) - t0 )) s ($(left) s left)"
    grep -E "^[0-9]+%: Checks" "$OUT/tests.log" | awk '{ c += $3; x += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, x, e }'
    echo "variants run: $(grep -c 'shapes, worst' "$OUT/tests.log") of $(grep -c '^layernorm' out/manifest.tsv)"
    grep -E ":[EF]:|crashed" "$OUT/tests.log" | cut -c1-300 | head -8
    echo "objects with LDL/STL in SASS: $(wc -l </tmp/new_ldl.txt) of $(wc -l </tmp/new_objs.txt)"; } | tee -a "$OUT/summary.txt"
  tune_merge ${KITE_TUNE_OPS:-layernorm layernorm_bwd}
  rm -f "$OUT"/tune.*.tsv
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/vs_torch.py --op ${KITE_VS_OPS:-layernorm,layernorm_bwd} \
    --n 1024,4096,16384,65536,131072,262144 --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -E "^(layernorm|rmsnorm|geomean|MISMATCH|ERROR)" "$OUT/vs_torch.txt" | head -30; } | tee -a "$OUT/summary.txt"
}

# Session 13: the partial-sum ops (rmsnorm_bwd, layernorm_bwd) on no more
# CTAs than fit the GPU at once, from a workspace of up to 16 per SM: every
# variant and case tested (KITE_TEST_S seconds a process), SASS, tuned, torch.compile.
# With KITE_ONLY='*norm_bwd*' exported it builds those alone.
bwd13() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local t0=$(date +%s) dt op c
  for dt in bf16 f16 f32; do
    for op in rmsnorm_bwd layernorm_bwd; do
      CK_RUN_CASE=variants KITE_TEST_ONLY="${op}_${dt}_*" timeout ${KITE_TEST_S:-150} build/test_norm \
        >"/tmp/b13.$op.$dt.log" 2>&1 &
    done
  done
  for c in entry invalid lnb_entry lnb_invalid; do
    CK_RUN_CASE=$c timeout ${KITE_TEST_S:-150} build/test_norm >"/tmp/b13.$c.log" 2>&1 &
  done
  ls build/obj/*norm_bwd/*.o >/tmp/new_objs.txt
  xargs -P 4 -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "{}"' \
    </tmp/new_objs.txt >/tmp/new_ldl.txt
  wait
  cat /tmp/b13.*.log >"$OUT/tests.log"
  { echo "tests: $(( $(date +%s) - t0 )) s ($(left) s left)"
    grep -E "^[0-9]+%: Checks" "$OUT/tests.log" | awk '{ c += $3; x += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, x, e }'
    echo "processes done: $(grep -cE '^[0-9]+%: Checks' "$OUT/tests.log") of 10"
    echo "variants run: $(grep -c 'shapes, worst' "$OUT/tests.log") of $(grep -c 'norm_bwd' out/manifest.tsv)"
    grep -E ":[EF]:|crashed" "$OUT/tests.log" | cut -c1-300 | head -8
    echo "objects with LDL/STL in SASS: $(wc -l </tmp/new_ldl.txt) of $(wc -l </tmp/new_objs.txt)"; } | tee -a "$OUT/summary.txt"
  tune_merge rmsnorm_bwd layernorm_bwd
  rm -f "$OUT"/tune.*.tsv
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/vs_torch.py --op rmsnorm_bwd,layernorm_bwd \
    --n 1024,4096,16384,65536,131072,262144 --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -E "^(layernorm|rmsnorm|geomean|MISMATCH|ERROR)" "$OUT/vs_torch.txt" | head -30; } | tee -a "$OUT/summary.txt"
}

T0=$(date +%s)
build
case $stage in
  first) first ;;
  final) final ;;
  gpu) gpu ;;
  tests) tests ;;
  rows) rows ;;
  gemm) gemm ;;
  all) tests; rows; gemm ;;
  measure) rows; gemm ;;
  check) gemm_suite; gpu_suites ;;
  rowsall) rowsall ;;
  rowscheck) gpu_parallel; crash_names; rowsall ;;
  rowsquick) rowsquick ;;
  final5) gpu_suites cpu; row_sass; rowsall ;;
  tune) tune ;;
  tune6) tune6 ;;
  check6) check6 ;;
  retune6) retune6 ;;
  tuneall) tuneall ;;
  tune7) tune7 ;;
  check7) check7 ;;
  check7b) check7b ;;
  tune8) tune8 ;;
  clus8) clus8 ;;
  check8) check8 ;;
  clus8b) clus8b ;;
  checktable) checktable ;;
  final4) gpu_suites cpu; gemm_suite ;;
  norm9) norm9 ;;
  first9) norm9; gpu_parallel; row_sass ;;
  measure9) measure9 ;;
  final9) final9 ;;
  ln10) ln10 ;;
  first10) first10 ;;
  second10) second10 ;;
  final10) final10 ;;
  ln11) ln11 ;;
  probe11) probe11 ;;
  ln12) ln12 ;;
  bwd13) bwd13 ;;
  *) echo "device_run.sh: unknown stage '$stage' (see the list at the top)"; exit 2 ;;
esac
