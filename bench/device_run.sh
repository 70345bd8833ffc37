#!/usr/bin/env bash
# Runs on the GPU machine (the `device` tool), in stages that each fit one
# device call (10 minutes); the build stays on the warm machine between calls.
#   bash bench/device_run.sh build           the build alone (make -j16, kite-bench, the test binaries)
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
#   bash bench/device_run.sh check           the gemm suite against cuBLASLt, then test_gemm and
#                                            test_norm beside test_gpu's partitions, the SASS checks
#   bash bench/device_run.sh norm            test_norm alone, split over processes
#   bash bench/device_run.sh sass            every kernel object's SASS: LDL/STL, HGMMA in the TMA gemms
#   bash bench/device_run.sh rowsall         every row variant (bf16), the dispatch, torch.compile
#   bash bench/device_run.sh rowscheck       test_gpu's partitions (a crash's frames named), then rowsall
#   bash bench/device_run.sh final4          every test binary (the GPU ones split), then the gemm suite
#   bash bench/device_run.sh rowsquick       every bf16 row variant for N = 1024 ... 16384, few runs
#   bash bench/device_run.sh final5          every test binary (GPU ones split), row SASS, rowsall
#   bash bench/device_run.sh tune            make tune (the tsv comes back in $OUT), --check-dispatch
#   bash bench/device_run.sh tuneall         make tune: both files come back in $OUT (commit, make gen)
#   KITE_OPS=a,b bash bench/device_run.sh ops   the row ops a and b after a change: every variant and
#                                            case tested, SASS, tuned into the table, torch.compile
#                                            (KITE_ONLY='a*' builds them alone; see ops() below)
#   bash bench/device_run.sh clusters        every cluster-row variant (reg and bulk) tested, SASS, then timed at 64 K - 256 K
#   bash bench/device_run.sh bulk            session 16's bulk and split rows tested, then timed at 4 K - 256 K
#   KITE_OPS=a,b bash bench/device_run.sh retune   tune a and b again, the table rebuilt, every op vs torch.compile
#   KITE_ONLY='*_bf16_reg_*_x*' bash bench/device_run.sh xchg   the bf16 cluster rows timed, then tested
#   KITE_ONLY='*norm*_x16' bash bench/device_run.sh byname   those variants tested, one process each
#   bash bench/device_run.sh timers          kite-bench and vs_torch.py on the same bwd ops at 256 K, in turn
#   KITE_NCU_OP=op KITE_NCU_N=n bash bench/device_run.sh ncurow   ncu of the dispatched variant, one launch
#                                            (KITE_NCU_VARIANT=glob: of the variants of that name)
#   bash bench/device_run.sh checktable      the committed table: tuned tests, held-out checks,
#                                            kite_gemm's overhead, torch.compile
# Every stage builds first (a no-op when the build is there; with .prebuilt/
# carried, made by bench/prebuilt.sh for this tree, a cold machine only links).  Logs go to
# $OUT; a short table comes last.  Each binary runs under a time limit, so a
# hung kernel costs minutes, not the call.
set -uo pipefail
stage=${1:-all} mode=${2:-full}
OUT=${OUT:-/tmp/kite-out}; mkdir -p "$OUT"
# Lua, Check and pkg-config unpacked from Debian packages, where carried (.deps/).
[ -f .deps/env.sh ] && source .deps/env.sh
export PATH="$PATH:/usr/local/cuda/bin"
bargs=; [ "$mode" = quick ] && bargs=--quick

# A test log (processes' outputs one after another): Check's totals over its
# processes, how many processes finished, how many variants were checked.
checks_total() { grep -E "^[0-9]+%: Checks" "$1" | awk '{ c += $3; f += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, f, e }'; }
procs_done() { grep -cE '^[0-9]+%: Checks' "$1"; }
variants_run() { grep -cE 'shapes, worst|^variant .*; worst' "$1"; }
# Of the test logs named, those whose process did not finish (cut by its time limit, or crashed).
procs_cut() { local f; for f in "$@"; do grep -qE '^[0-9]+%: Checks' "$f" || echo "cut: $(basename "$f" .log)"; done; }
# A test log and the processes' own logs: totals, failures, the processes cut.
tests_report() {
  local log=$1; shift
  checks_total "$log"
  echo "processes done: $(procs_done "$log") of $#; variants run: $(variants_run "$log")"
  grep -E ":[EF]:|crashed" "$log" | cut -c1-300 | head -8
  procs_cut "$@"
}
source bench/sass.sh   # with_ldl, ldl_report
source bench/prebuilt.sh
# What the table object was built from: the variants asked for and the table's source.
table_stamp() { echo "${KITE_ONLY:-all} $(md5sum <out/kite_table.c)"; }
build() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  # the device's .git may lag the tree it was sent: pass KITE_COMMIT (tune lines carry it too)
  echo "${KITE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null) (git there; KITE_COMMIT unset)}"
  local t0=$(date +%s)
  [ -z "${KITE_ONLY:-}" ] && prebuilt_unpack
  # After a KITE_ONLY build on this warm machine the table copied in is older
  # than its object, which still holds the KITE_ONLY table (seen in session 18).
  [ "$(cat build/.kite_table 2>/dev/null)" = "$(table_stamp)" ] || touch out/kite_table.c
  { make -j16 && make -j16 build/kite-bench test-bins; } >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  table_stamp >build/.kite_table
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
# of up to 24 M values per variant): the variants of each op and dtype in up
# to three processes (variant_parts), every other test case (Check's
# CK_RUN_CASE) in one each; 14 at once, KITE_TEST_S (300) s each.
gpu_parallel() {
  local t0=$(date +%s) parts="" op dt
  rm -f /tmp/gpu.*.log   # (a warm machine's earlier run)
  for op in $(row_ops); do
    [ "$(op_binary "$op")" = test_gpu ] || continue   # (test_norm's ops: norm_start)
    for dt in bf16 f16 f32; do parts="$parts $(variant_parts "$op" "$dt" | cut -d' ' -f2)"; done
  done
  set -f; printf '%s\n' $parts entry targets invalid launch huge tuned | xargs -P 14 -I{} sh -c '
    case "$1" in
      *_*) CK_RUN_CASE=variants KITE_TEST_ONLY="$1" timeout ${KITE_TEST_S:-300} build/test_gpu >"/tmp/gpu.$(echo "$1" | tr -cd "a-z0-9_").log" 2>&1 ;;
      *) CK_RUN_CASE="$1" timeout ${KITE_TEST_S:-300} build/test_gpu >"/tmp/gpu.$1.log" 2>&1 ;;
    esac
    echo "$1 rc=$?"' sh {} | sort >"$OUT/gpu_parts.txt"; set +f
  cat /tmp/gpu.*.log >"$OUT/gpu.log"
  echo "---- test_gpu in $(wc -l <"$OUT/gpu_parts.txt") processes, $(( $(date +%s) - t0 )) s: $(grep -c 'rc=0$' "$OUT/gpu_parts.txt") exit 0"
  grep -v 'rc=0$' "$OUT/gpu_parts.txt"
  echo "test_gpu: $(checks_total "$OUT/gpu.log")"
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
  local op
  for op in $(row_ops); do ls build/obj/$op/*.o; done >/tmp/row_objs.txt
  ldl_report "row objects" 4 </tmp/row_objs.txt
}

# The brief's SASS checks over every kernel object, 16 dumps at a time (one
# cuobjdump of the whole libkite.a ran past a 600 s call in session 39): local
# memory (LDL/STL) anywhere, HGMMA in every TMA gemm.
all_sass() {
  ls build/obj/*/*.o | grep -v '^build/obj/runtime/' | ldl_report "kernel objects" 16
  ls build/obj/gemm/gemm_tma_*.o >/tmp/tma_objs.txt
  xargs -P 16 -I{} sh -c 'cuobjdump --dump-sass "{}" | grep -q HGMMA || echo "{}"' </tmp/tma_objs.txt >/tmp/no_hgmma.txt
  echo "TMA gemm objects without HGMMA: $(wc -l </tmp/no_hgmma.txt) of $(wc -l </tmp/tma_objs.txt)"
  head -5 /tmp/no_hgmma.txt
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

checktable() {
  left() { echo $(( 580 - ($(date +%s) - T0) )); }
  CK_RUN_CASE=tuned timeout 150 build/test_gpu >"$OUT/tuned_rows.log" 2>&1 &
  CK_RUN_CASE=tuned timeout 250 build/test_gemm >"$OUT/tuned_gemm.log" 2>&1 &
  wait
  for f in tuned_rows tuned_gemm; do echo "$f: $(grep -E '^[0-9]+%: Checks' "$OUT/$f.log")"; grep -E ":[EF]:" "$OUT/$f.log" | cut -c1-250 | head -4; done
  timeout 90 build/kite-bench --check-dispatch --variants >"$OUT/check_dispatch.txt" 2>&1
  echo "check-dispatch: rc=$?"; tail -1 "$OUT/check_dispatch.txt"
  gemm_held_out
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
  echo "vs_torch rc=$? ($(left) s left)"; tail -20 "$OUT/vs_torch.txt"
}

# Session 5: every bf16 row variant up to 16384, quickly, for ranking.
rowsquick() {
  timeout 300 build/kite-bench --quick --variants --n 1024,2048,4096,8192,16384 >"$OUT/variants.txt" 2>&1
  echo "kite-bench --variants rc=$? ($(( $(date +%s) - T0 )) s)"
  grep -E " [=*] " "$OUT/variants.txt" | awk '{ printf "%-14s %6s %s %-48s %8s %6s\n", $1, $4, $5, $6, $7, $8 }'
}

# The row tune of each op named, each into its own file in $OUT (a tune cut
# short loses only its op), their lines put in bench/tuned/h200*.tsv in place
# of the ops' old ones (both files come back in $OUT), the table regenerated
# and libkite.so and kite-bench rebuilt; what it did goes to summary.txt,
# the logs to tune.log, the per-op files into tunes.tgz (a call brings back
# only a few files: session 18 lost 15 of them).
# KITE_TUNE_FROM=N: only the grid from N up is timed and replaced.
tune_merge() {
  local op f t0 rc done_=() from=${KITE_TUNE_FROM:-64}
  for op in "$@"; do
    # KITE_TUNE_KEEP_S: seconds kept for what follows the tunes (vs_torch)
    [ $(left) -gt $(( ${KITE_TUNE_KEEP_S:-0} + 30 )) ] ||
      { echo "tune $op: not run, $(left) s left" | tee -a "$OUT/summary.txt"; continue; }
    t0=$(date +%s)
    timeout 120 build/kite-bench --tune "$OUT/tune.$op.tsv" --times "$OUT/tune.$op.times.tsv" --op $op \
      --from $from >"$OUT/tune.$op.log" 2>&1
    rc=$?
    # a table with variants missing tunes nothing: keep the old lines
    grep -q ' 0 variants ' "$OUT/tune.$op.log" && rc=3
    echo "tune $op: rc=$rc, $(( $(date +%s) - t0 )) s ($(left) s left)" | tee -a "$OUT/summary.txt"
    [ $rc -eq 0 ] && done_+=("$op")   # a failed tune keeps the op's old lines
  done
  [ ${#done_[@]} -gt 0 ] && tune_rules "$from" "${done_[@]}"
  cat "$OUT"/tune.*.log "$OUT/regen.log" >"$OUT/tune.log" 2>/dev/null
  (cd "$OUT" && tar czf tunes.tgz tune.*.* && rm -f tune.*.*)
}

# The tuned ops' rules from N = $1 up replaced by their new tunes' (in $OUT),
# the table regenerated and libkite.so and kite-bench rebuilt.
tune_rules() {
  local from=$1 op f t0; shift
  local done_=("$@") alt=$(IFS='|'; echo "$*")
  for f in h200.tsv h200.times.tsv; do   # the op's old lines from N = from up replaced
    { awk -F'\t' -v ops="|$alt|" -v from=$from 'index(ops, "|" $1 "|") && $5 + 0 >= from { next } { print }' bench/tuned/$f
      for op in "${done_[@]}"; do grep -hvP '^(#|op\t)' "$OUT/tune.$op.${f#h200.}"; done; } >/tmp/$f
    cp /tmp/$f bench/tuned/$f; cp /tmp/$f "$OUT/$f"
  done
  t0=$(date +%s)
  { make gen KITE_GPU=h200 && make -j16 build/libkite.so build/kite-bench; } >"$OUT/regen.log" 2>&1
  echo "table regenerated: rc=$?, $(( $(date +%s) - t0 )) s; $(grep -E 'kite-gen:' "$OUT/regen.log")" | tee -a "$OUT/summary.txt"
}

# The test binary that checks an op's variants, and its own cases for the op
# (those that call other ops only in a full build: KITE_ONLY unset).
op_binary() { case $1 in rmsnorm_bwd|layernorm_bwd|rmsnorm_res|layernorm) echo test_norm ;; *) echo test_gpu ;; esac; }
op_cases() {
  local full=; [ -z "${KITE_ONLY:-}" ] && full=1
  case $1 in
    layernorm) echo ln_entry ln_invalid ;;
    layernorm_bwd) echo lnb_entry lnb_invalid ${full:+lnb_diff} ;;
    rmsnorm_bwd) echo entry invalid ${full:+diff} ;;
    rmsnorm_res) echo res_entry res_invalid ;;
  esac
}

# The variants of op $1 and dtype $2 in parts for separate processes, a line
# "name glob" each: the cluster rows apart, in two halves (their tests, 300
# rows of up to 128 K, take the longest); a part with no variant in the
# manifest is left out.
variant_parts() {
  local part name glob re
  for part in 'p:*_[ps][0-9]:_[ps][0-9]$' 'x24:*_x[24]:_x[24]$' 'x816:*_x[18]*:_x(8|16)$'; do
    IFS=: read -r name glob re <<<"$part"
    awk -F'\t' -v r="^${1}_${2}_.*$re" '$1 ~ r { f = 1 } END { exit !f }' out/manifest.tsv && echo "$name ${1}_${2}_$glob"
  done
}

# Op $1's tests in the background, per dtype one process for its variants and
# one each for its two halves of cluster rows, one per case of op_cases, logs
# $2/t.<op>.<dtype>.<p, x24 or x816>.log and $2/t.<op>.<case>.log; KITE_TEST_S
# seconds each, else $3.
op_tests() {
  local op=$1 dir=$2 s=${KITE_TEST_S:-$3} bin dt c name glob
  bin=$(op_binary "$op")
  for dt in bf16 f16 f32; do
    while read -r name glob; do
      CK_RUN_CASE=variants KITE_TEST_ONLY="$glob" timeout $s build/$bin >"$dir/t.$op.$dt.$name.log" 2>&1 &
    done < <(variant_parts "$op" "$dt")
  done
  for c in $(op_cases "$op"); do
    CK_RUN_CASE=$c timeout $s build/$bin >"$dir/t.$op.$c.log" 2>&1 &
  done
}

# The row ops of KITE_OPS (comma-separated), after a change to them: every
# variant tested, one process per op and dtype, beside the op's own cases
# (KITE_TEST_S seconds a process, 150); SASS of their objects; their tune put
# into bench/tuned/h200*.tsv and the table; torch.compile at six N.  Export
# KITE_ONLY (a glob of those ops' variants) to build them alone, KITE_COMMIT
# for the tune lines, KITE_CALL_S for the call's seconds.  Seven files come
# back: summary.txt, build.log, tests.log, tune.log, h200.tsv,
# h200.times.tsv, vs_torch.txt.
ops() {
  left() { echo $(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) )); }
  local keep=$OUT OUT=/tmp/kite-ops t0=$(date +%s) op c gpu=
  local list=${KITE_OPS:?set KITE_OPS, e.g. layernorm,layernorm_bwd}
  rm -rf "$OUT"; mkdir -p "$OUT"
  for op in ${list//,/ }; do
    [ "$(op_binary "$op")" = test_gpu ] && gpu=1
    op_tests "$op" "$OUT" 150
  done
  if [ -n "$gpu" ] && [ -z "${KITE_ONLY:-}" ]; then
    for c in entry targets invalid; do
      CK_RUN_CASE=$c timeout ${KITE_TEST_S:-150} build/test_gpu >"$OUT/t.gpu.$c.log" 2>&1 &
    done
  fi
  for op in ${list//,/ }; do ls build/obj/$op/*.o; done >"$OUT/objs.txt"
  with_ldl <"$OUT/objs.txt" >"$OUT/ldl.txt"
  wait
  cat "$OUT"/t.*.log >"$OUT/tests.log"
  local procs=$(ls "$OUT"/t.*.log | wc -l)
  { echo "tests: $(( $(date +%s) - t0 )) s ($(left) s left)"
    checks_total "$OUT/tests.log"
    echo "processes done: $(procs_done "$OUT/tests.log") of $procs"
    echo "variants run: $(variants_run "$OUT/tests.log") of $(awk -F'\t' -v ops=",$list," 'index(ops, "," $2 ",")' out/manifest.tsv | wc -l)"
    grep -E ":[EF]:|crashed" "$OUT/tests.log" | cut -c1-300 | head -8
    echo "objects with LDL/STL in SASS: $(wc -l <"$OUT/ldl.txt") of $(wc -l <"$OUT/objs.txt")"; } | tee -a "$OUT/summary.txt"
  tune_merge ${list//,/ }
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/vs_torch.py --op "$list" \
    --n 1024,4096,16384,65536,131072,262144 >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -E "^(${list//,/|}) |^(geomean|MISMATCH|ERROR)" "$OUT/vs_torch.txt" | head -30; } | tee -a "$OUT/summary.txt"
  cat "$OUT/summary.txt" >>"$keep/summary.txt"
  cp "$OUT"/{tests.log,tune.log,tunes.tgz,h200.tsv,h200.times.tsv,vs_torch.txt} "$keep"/ 2>/dev/null
}

# kite_gemm's host time and the gemm held-out check (issue 4) on the
# committed table, into summary.txt; the check's lines to check_dispatch_gemm.txt.
gemm_held_out() {
  timeout 40 build/kite-bench gemm --overhead 2>&1 | tail -5 | tee -a "$OUT/summary.txt"
  timeout 140 build/kite-bench gemm --check-dispatch >"$OUT/check_dispatch_gemm.txt" 2>&1
  echo "gemm check-dispatch: rc=$?" | tee -a "$OUT/summary.txt"
  grep "^check-dispatch" "$OUT/check_dispatch_gemm.txt" | tee -a "$OUT/summary.txt"
}

# The committed table's gemm half checked (held-out shapes, kite_gemm's host
# time) while the GPU is quiet, then test_gpu and test_norm whole, each split
# over processes (KITE_TEST_S seconds each, 300).
whole() {
  gemm_held_out
  norm_start
  gpu_parallel
  norm_report
  echo "row variants run: $(variants_run "$OUT/gpu.log")"
}

# test_norm's variants and cases in the background, split over processes
# (KITE_TEST_S seconds each, 300); norm_report waits for them.
norm_start() {
  local op; norm_t0=$(date +%s)
  rm -f /tmp/norm/t.*.log; mkdir -p /tmp/norm
  for op in rmsnorm_bwd layernorm_bwd rmsnorm_res layernorm; do op_tests "$op" /tmp/norm 300; done
}
norm_report() {
  wait
  cat /tmp/norm/t.*.log >"$OUT/norm.log"
  echo "---- test_norm in $(ls /tmp/norm/t.*.log | wc -l) processes, $(( $(date +%s) - norm_t0 )) s"
  echo "test_norm: $(checks_total "$OUT/norm.log")"
  echo "processes done: $(procs_done "$OUT/norm.log")"
  echo "norm variants run: $(variants_run "$OUT/norm.log")"
  grep -E ":[EF]:|crashed" "$OUT/norm.log" | cut -c1-300 | head -8
  procs_cut /tmp/norm/t.*.log
}

# The gemm tune alone (export KITE_ONLY='gemm*' to build only gemm): its
# lines put in bench/tuned/h200*.tsv in place of the old gemm lines, the
# table regenerated, the models checked (leave-one-out, kite-gen) and the
# held-out shapes and kite_gemm's host time measured.  Six files come back:
# summary.txt, build.log, tune.gemm.log, h200.tsv, h200.times.tsv,
# check_dispatch_gemm.txt.
gemmtune() {
  local t0=$(date +%s) f rc
  timeout 330 build/kite-bench gemm --tune /tmp/g.tsv --times /tmp/g.times.tsv >"$OUT/tune.gemm.log" 2>&1
  rc=$?
  echo "gemm tune: rc=$rc, $(( $(date +%s) - t0 )) s; $(grep -c . /tmp/g.times.tsv) times lines" | tee -a "$OUT/summary.txt"
  tail -3 "$OUT/tune.gemm.log"
  [ $rc -eq 0 ] || return 0
  for f in tsv times.tsv; do
    { grep -vP '^gemm\t' bench/tuned/h200.$f; grep -hvP '^(#|op\t)' /tmp/g.$f; } >/tmp/h200.$f
    cp /tmp/h200.$f bench/tuned/h200.$f; cp /tmp/h200.$f "$OUT/h200.$f"
  done
  t0=$(date +%s)
  { make gen KITE_GPU=h200 && make -j16 build/libkite.so build/kite-bench; } >/tmp/regen.log 2>&1
  echo "table regenerated: rc=$?, $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
  build/kite-gen -t templates --times bench/tuned/h200.times.tsv --check-model -o /tmp/cm 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
  grep -A18 "kite_gemm_models_0\[\] = {" out/kite_table.c | cut -c1-120
  gemm_held_out
}

# The committed gemm table: its choice at every tuned shape tested (test_gemm's
# "tuned" case), the held-out shapes and kite_gemm's host time.
gemmcheck() {
  CK_RUN_CASE=tuned timeout 250 build/test_gemm >"$OUT/tuned_gemm.log" 2>&1
  echo "tuned_gemm: rc=$? $(grep -E '^[0-9]+%: Checks' "$OUT/tuned_gemm.log")" | tee -a "$OUT/summary.txt"
  grep -E ":[EF]:" "$OUT/tuned_gemm.log" | cut -c1-250 | head -4
  gemm_held_out
}

# The row ops' held-out check (30 random N per op, bf16), every op, on a quiet
# GPU; per-op geomean and worst from its lines (they survive a cut).
rowcheck() {
  timeout $(( 570 - ($(date +%s) - T0) )) build/kite-bench --check-dispatch >"$OUT/check_dispatch.txt" 2>&1
  echo "row check-dispatch: rc=$? ($(( $(date +%s) - T0 )) s)" | tee -a "$OUT/summary.txt"
  awk '$NF ~ /^[0-9.]+$/ && NF == 8 { n[$1]++; l[$1] += log($NF); if ($NF > w[$1]) w[$1] = $NF }
       END { for (o in n) printf "%-18s %2d shapes, geomean %.3f, worst %.3f\n", o, n[o], exp(l[o] / n[o]), w[o] }' \
    "$OUT/check_dispatch.txt" | sort | tee -a "$OUT/summary.txt"
  grep "^check-dispatch" "$OUT/check_dispatch.txt" | tee -a "$OUT/summary.txt"
}

# Session 15: cluster rows on a persistent grid of the clusters that fit,
# each asking L2 for its next row while it reduces this one.  Every cluster
# variant of the seven ops that have them tested (one process per op and
# dtype), spills in any row object, then every variant of those ops timed at
# N = 64 K, 128 K, 256 K (bf16, M*N = 2^28) on a quiet GPU.
clusters() {
  local t0=$(date +%s) op dt mode ops=softmax,softmax_bwd,cross_entropy,rmsnorm,rmsnorm_bwd,layernorm,layernorm_bwd
  mkdir -p /tmp/cl; rm -f /tmp/cl/t.*.log
  for op in ${ops//,/ }; do
    for dt in bf16 f16 f32; do
      for mode in reg bulk; do   # bulk cluster rows: 16-bit only
        [ $dt = f32 ] && [ $mode = bulk ] && continue
        CK_RUN_CASE=variants KITE_TEST_ONLY="${op}_${dt}_${mode}_*_x*" timeout ${KITE_CLUSTER_TEST_S:-300} \
          build/$(op_binary $op) >/tmp/cl/t.$op.$dt.$mode.log 2>&1 &
      done
    done
  done
  ls build/obj/*/*_x[0-9]*.o >/tmp/cl/objs.txt
  with_ldl </tmp/cl/objs.txt >"$OUT/clusters_ldl.txt"
  wait
  cat /tmp/cl/t.*.log >"$OUT/clusters_tests.log"
  echo "---- cluster variants tested in $(ls /tmp/cl/t.*.log | wc -l) processes, $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
  checks_total "$OUT/clusters_tests.log" | tee -a "$OUT/summary.txt"
  echo "processes done: $(procs_done "$OUT/clusters_tests.log"); variants run: $(variants_run "$OUT/clusters_tests.log")" | tee -a "$OUT/summary.txt"
  grep -E ":[EF]:|crashed" "$OUT/clusters_tests.log" | cut -c1-300 | head -8
  procs_cut /tmp/cl/t.*.log | tee -a "$OUT/summary.txt"
  echo "cluster objects with LDL/STL in SASS: $(wc -l <"$OUT/clusters_ldl.txt") of $(wc -l </tmp/cl/objs.txt)" | tee -a "$OUT/summary.txt"
  echo "row objects with spills: $(grep -lE '[1-9][0-9]* bytes spill' build/obj/*/*.o.log | grep -vc /gemm/)" | tee -a "$OUT/summary.txt"
  timeout $(( 575 - ($(date +%s) - T0) )) build/kite-bench --quick --variants --op $ops --n 65536,131072,262144 >"$OUT/variants.txt" 2>&1
  echo "kite-bench --variants rc=$? ($(( $(date +%s) - T0 )) s)"
  grep -E " [=*] " "$OUT/variants.txt" | awk '{ printf "%-14s %6s %s %-48s %8s %6s\n", $1, $4, $5, $6, $7, $8 }'
}

# Session 17 (written in session 16 without a GPU, not yet run): the row
# variants new in session 16, bulk rows of the seven ops that have them (row
# blocks landing in shared-memory stages by bulk copies; new: cluster bulk
# rows, the two-operand ops' bulk rows) and cross_entropy_bwd's split rows
# (_s4), tested by name, LDL/STL in their SASS.  A process per op, dtype and
# kind (cluster rows, whose references are long, apart from the others):
# session 15's cluster tests took ~25 s a variant, so a process of 8 needs
# ~200 s of a 16-core machine shared by ~38.  KITE_BULK_TEST_S: seconds a
# process (400).  With a minute left, every variant of those ops is timed at
# N = 4 K to 256 K (bf16, M*N = 2^28): per op and N the dispatched variant,
# the fastest and the fastest new one.  tuneall times them all anyway.
bulk() {
  local t0=$(date +%s) op dt kind glob ops=softmax,softmax_bwd,cross_entropy,rmsnorm,rmsnorm_bwd,layernorm,layernorm_bwd
  mkdir -p /tmp/bk; rm -f /tmp/bk/t.*.log
  for op in ${ops//,/ } cross_entropy_bwd; do
    for dt in bf16 f16 f32; do
      for kind in rows clusters; do
        glob=bulk_*_p[24]; [ $kind = clusters ] && glob=bulk_*_x*
        [ $op = cross_entropy_bwd ] && { [ $kind = clusters ] && continue; glob=*_s4; }
        [ $dt = f32 ] && [ $kind = clusters ] && continue   # bulk cluster rows are 16-bit only
        CK_RUN_CASE=variants KITE_TEST_ONLY="${op}_${dt}_$glob" timeout ${KITE_BULK_TEST_S:-400} \
          build/$(op_binary $op) >/tmp/bk/t.$op.$dt.$kind.log 2>&1 &
      done
    done
  done
  ls build/obj/*/*_bulk_*.o build/obj/*/*_s4.o >/tmp/bk/objs.txt
  with_ldl </tmp/bk/objs.txt >"$OUT/bulk_ldl.txt"
  wait
  cat /tmp/bk/t.*.log >"$OUT/bulk_tests.log"
  { echo "---- bulk and split variants tested in $(ls /tmp/bk/t.*.log | wc -l) processes, $(( $(date +%s) - t0 )) s"
    checks_total "$OUT/bulk_tests.log"
    echo "processes done: $(procs_done "$OUT/bulk_tests.log"); variants run: $(variants_run "$OUT/bulk_tests.log") of $(grep -cE '_bulk_|_s4\b' out/manifest.tsv)"
    grep -E ":[EF]:|crashed" "$OUT/bulk_tests.log" | cut -c1-300 | head -8
    procs_cut /tmp/bk/t.*.log
    echo "new objects with LDL/STL in SASS: $(wc -l <"$OUT/bulk_ldl.txt") of $(wc -l </tmp/bk/objs.txt)"; } | tee -a "$OUT/summary.txt"
  local left=$(( 575 - ($(date +%s) - T0) ))
  [ $left -lt 60 ] && { echo "no time left to time the variants ($left s)"; return; }
  timeout $left build/kite-bench --quick --variants --op $ops,cross_entropy_bwd \
    --n 4096,16384,65536,131072,262144 >"$OUT/variants.txt" 2>&1
  echo "kite-bench --variants rc=$? ($(( $(date +%s) - T0 )) s)"
  # op N: dispatched TB/s (variant), fastest, fastest new (bulk or split)
  awk '$5 == "=" { d[$1 " " $4] = $8; dv[$1 " " $4] = $6; next }
       $4 ~ /^[0-9]+$/ && $5 != "FAILED" { k = $1 " " $4; v = $5; t = $7
         if ($5 == "*") { v = $6; t = $8 }
         if (t + 0 > best[k]) { best[k] = t + 0; bv[k] = v }
         if (v ~ /_bulk_|_s4$/ && t + 0 > bb[k]) { bb[k] = t + 0; bbv[k] = v } }
       END { for (k in d) printf "%-22s dispatched %6s %-40s best %6s %-40s new %6s %s\n", k, d[k], dv[k],
                                  best[k], bv[k], bb[k], bbv[k] }' "$OUT/variants.txt" | sort -k1,1 -k2n | tee -a "$OUT/summary.txt"
}

# Session 17: the ops of KITE_OPS tuned again after new variants were checked
# by name (the bulk stage), the table rebuilt, then every op against
# torch.compile at six N on that table (vs_torch.txt, vs_torch.csv).
retune() {
  left() { echo $(( ${KITE_CALL_S:-575} - ($(date +%s) - T0) )); }
  local list=${KITE_OPS:?set KITE_OPS, e.g. cross_entropy_bwd,rmsnorm_bwd}
  tune_merge ${list//,/ }
  # KITE_VS_OPS=a,b: vs_torch of those ops only (default every op)
  PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" \
    --n 1024,4096,16384,65536,131072,262144 ${KITE_VS_OPS:+--op $KITE_VS_OPS} >"$OUT/vs_torch.txt" 2>&1
  { echo "vs_torch rc=$? ($(left) s left)"; grep -vE '^#' "$OUT/vs_torch.txt" | tail -52; } | tee -a "$OUT/summary.txt"
}

# Session 17: cluster rows exchange their CTAs' values by st.async and an
# mbarrier instead of a cluster barrier.  Build the bf16 cluster register rows
# alone (KITE_ONLY='*_bf16_reg_*_x*'), time them at 64 K and 256 K first, then
# test them by name in the time left (one process per op).
xchg() {
  local ops=softmax,softmax_bwd,cross_entropy,rmsnorm,rmsnorm_bwd,layernorm,layernorm_bwd op left glob=${KITE_ONLY:-*_bf16_reg_*_x*}
  rm -f /tmp/xt.*.log
  timeout 150 build/kite-bench --quick --variants --op $ops --n ${KITE_XCHG_N:-65536,262144} >"$OUT/variants.txt" 2>&1
  echo "kite-bench rc=$? ($(( $(date +%s) - T0 )) s)"
  awk '$4 ~ /^[0-9]+$/ && ($5 == "*" || $5 == "=") { next } $4 ~ /^[0-9]+$/ { printf "%-14s %7s %-48s %6s\n", $1, $4, $5, $7 }' \
    "$OUT/variants.txt" | sort -k1,1 -k2n -k4nr | awk '{ k = $1 " " $2; if (n[k]++ < 3) print }' | tee -a "$OUT/summary.txt"
  left=$(( ${KITE_CALL_S:-560} - ($(date +%s) - T0) ))
  for op in ${ops//,/ }; do
    CK_RUN_CASE=variants KITE_TEST_ONLY="${op}_${glob#\*_}" timeout $(( left - 10 )) \
      build/$(op_binary $op) >/tmp/xt.$op.log 2>&1 &
  done
  wait
  cat /tmp/xt.*.log >"$OUT/tests.log"
  tests_report "$OUT/tests.log" /tmp/xt.*.log | tee -a "$OUT/summary.txt"
}

# Session 17 (written in session 16, not yet run): in session 15 vs_torch.py
# timed layernorm_bwd and rmsnorm_bwd at N = 256 K 7-10% slower than
# kite-bench did (same variants; softmax_bwd, with no partial rows, alike).
# Both timers back to back, twice each, kite alone (no torch.compile).
timers() {
  local op k
  for op in layernorm_bwd rmsnorm_bwd softmax_bwd; do
    for k in 1 2; do
      timeout 60 build/kite-bench --op $op --n 262144 2>&1 | grep -E "^$op " | sed 's/^/kite-bench /'
      timeout 90 python3 bench/vs_torch.py --no-compile --op $op --n 262144 2>&1 | grep -E "^$op " | sed 's/^/vs_torch   /'
    done
  done | tee -a "$OUT/summary.txt"
}

# Session 16 (written in session 15, not yet run): one launch of the variant
# kite dispatches for KITE_NCU_OP at N = KITE_NCU_N (bf16, M*N = 2^28) under
# ncu, with the sections that say where a row's time goes (stall reasons,
# issue slots, memory throughput); the whole report comes back in $OUT.
# KITE_NCU_LAUNCHES=k: the first k launches of `kite-bench --variants` instead
# (every variant that takes n, in its listing order; one launch each).
ncurow() {
  local op n=${KITE_NCU_N:-262144} ops=${KITE_NCU_OP:-layernorm_bwd} k=${KITE_NCU_LAUNCHES:-1} v= skip=0 only=()
  [ "$k" -gt 1 ] && v=--variants
  # KITE_NCU_VARIANT=glob: the variants of that name instead (the dispatched launch, first, skipped)
  [ -n "${KITE_NCU_VARIANT:-}" ] && { v=--variants; skip=1; only=(--only "$KITE_NCU_VARIANT"); }
  for op in ${ops//,/ }; do
    timeout $(( ${KITE_CALL_S:-570} - ($(date +%s) - T0) )) ncu --clock-control none --launch-skip $skip --launch-count $k \
      -k "regex:^${op}(_fwd)?$" \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
      --section Occupancy --section LaunchStats \
      --metrics 'regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio' \
      build/kite-bench --op "$op" --n "$n" --warmup 0 --reps 1 $v "${only[@]}" >"$OUT/ncu.$op.$n.txt" 2>&1
    echo "ncu $op $n rc=$?"
    grep -E "Duration|Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Cluster Size|Warp Cycles|Eligible|Issued" \
      "$OUT/ncu.$op.$n.txt" | head -$(( 24 * k ))
    # the stall reasons, largest first (warps stalled per issued instruction)
    grep -E "issue_stalled" "$OUT/ncu.$op.$n.txt" | awk '{ print $NF, $1 }' | sort -rn | head -8
  done
}

# Session 18: each variant matching KITE_BYNAME (globs; default KITE_ONLY,
# which builds them alone) tested by name in its own process, 16 at a time, until
# the call's time runs out.  Session 18's first call reached every cluster
# variant but the x16 norm rows: their processes ran out of time before them.
byname() {
  local globs=${KITE_BYNAME:-${KITE_ONLY:?byname needs KITE_ONLY or KITE_BYNAME}}
  mkdir -p /tmp/bn; rm -f /tmp/bn/*
  export BN_END=$(( T0 + ${KITE_CALL_S:-570} ))   # each process stops by then, however late it starts
  awk -F'\t' 'NR > 1 { print $1, $2 }' out/manifest.tsv | { set -f   # globs of variant names, not of files
    while read -r v op; do
      for g in $globs; do case $v in $g) echo "$v $(op_binary $op)"; break ;; esac; done
    done; } | awk '{ w = match($1, /_x[0-9]+$/) ? 64 / substr($1, RSTART + 2) : 64; print w, $0 }' |
    sort -n -s -k1,1 | cut -d' ' -f2- >/tmp/bn/list   # the widest clusters (longest rows, slowest tests) start first
  [ -s /tmp/bn/list ] || { echo "byname: no variant matches '$globs'" | tee -a "$OUT/summary.txt"; return; }
  xargs -P 16 -L 1 sh -c 'left=$(( BN_END - $(date +%s) )); [ $left -gt 5 ] || exit 0
      CK_RUN_CASE=variants KITE_TEST_ONLY="$0" timeout $left build/$1 >/tmp/bn/$0.log 2>&1' </tmp/bn/list
  cat /tmp/bn/*.log >"$OUT/byname_tests.log"
  { echo "---- tested by name: $(ls /tmp/bn/*.log | wc -l) of $(wc -l </tmp/bn/list) variants, $(( $(date +%s) - T0 )) s"
    tests_report "$OUT/byname_tests.log" /tmp/bn/*.log; } | tee -a "$OUT/summary.txt"
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
  check) gemm_suite; norm_start; gpu_suites; norm_report; all_sass ;;
  sass) all_sass ;;
  norm) norm_start; norm_report ;;
  rowsall) rowsall ;;
  rowscheck) gpu_parallel; crash_names; rowsall ;;
  rowsquick) rowsquick ;;
  final5) gpu_suites cpu; row_sass; rowsall ;;
  tune) tune ;;
  tuneall) tuneall ;;
  checktable) checktable ;;
  whole) whole ;;
  gemmtune) gemmtune ;;
  gemmcheck) gemmcheck ;;
  rowcheck) rowcheck ;;
  final4) gpu_suites cpu; gemm_suite ;;
  ops) ops ;;
  clusters) clusters ;;
  ncurow) ncurow ;;
  bulk) bulk ;;
  timers) timers ;;
  retune) retune ;;
  xchg) xchg ;;
  byname) byname ;;
  build) ;;   # the build alone (every stage builds first)
  *) echo "device_run.sh: unknown stage '$stage' (see the list at the top)"; exit 2 ;;
esac
