#!/usr/bin/env bash
# One full run on the GPU machine (the `device` tool): build with make -j16,
# the whole test suite (GPU cases included), the benchmarks; a short table last.
# Logs go to $OUT when it is set.  Usage: bash bench/device_run.sh [quick]
set -uo pipefail
OUT=${OUT:-/tmp/kite-out}; mkdir -p "$OUT"
# Lua, Check and pkg-config unpacked from Debian packages, where carried (.deps/).
[ -f .deps/env.sh ] && source .deps/env.sh
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
git rev-parse --short HEAD 2>/dev/null || true
t0=$(date +%s)
{ make -j16 && make -j16 build/kite-bench; } >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
make -j16 test >"$OUT/test.log" 2>&1; trc=$?
grep -E "^(==|KITE_SKIPPED|[0-9]+%: Checks)|kite: [0-9]+ passed|FAIL|Error|error" "$OUT/test.log" | tail -40
echo "make test: rc=$trc"
mode=${1:-full}
if [ "$mode" = quick ]; then bargs=--quick; else bargs=; fi
build/kite-bench $bargs --csv "$OUT/bench.csv" >"$OUT/bench.txt" 2>&1; echo "kite-bench rc=$?"
build/kite-bench $bargs --variants --csv "$OUT/variants.csv" >"$OUT/variants.txt" 2>&1
echo "kite-bench --variants rc=$?"
build/kite-bench gemm $bargs --csv "$OUT/gemm.csv" >"$OUT/gemm.txt" 2>&1; echo "kite-bench gemm rc=$?"
PYTHONUNBUFFERED=1 python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
echo "vs_torch rc=$?"
cuobjdump --dump-sass build/libkite.a 2>/dev/null | grep -cE "LDL|STL" | sed 's/^/local-memory instructions in SASS: /'
# The gemm kernels' SASS, per variant: libkite.a's gemm members are
# build/obj/gemm/<variant>.o, one variant each, so each is dumped on its own.
# Columns: variant, kernels, HGMMA (wgmma), HMMA (mma.sync), LDL, STL.
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
echo "---- kite-bench"; cat "$OUT/bench.txt"
echo "---- vs torch"; tail -25 "$OUT/vs_torch.txt"
echo "---- gemm SASS (full table: gemm_sass.txt; variant kernels HGMMA HMMA LDL STL)"
awk '{ n++; if ($3 > 0) hg++; else if ($4 > 0) hm++; else none++; if ($5 + $6 > 0) loc++ }
     END { printf "gemm variants: %d; with HGMMA: %d; HMMA only: %d; neither: %d; with LDL/STL: %d\n",
           n, hg, hm, none, loc }' "$OUT/gemm_sass.txt"
awk '$5 + $6 > 0 || ($3 == 0 && $4 == 0)' "$OUT/gemm_sass.txt" | head -20
echo "---- gemm vs cuBLASLt"; cat "$OUT/gemm.txt"
