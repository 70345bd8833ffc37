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
PYTHONUNBUFFERED=1 python3 bench/vs_torch.py --csv "$OUT/vs_torch.csv" >"$OUT/vs_torch.txt" 2>&1
echo "vs_torch rc=$?"
cuobjdump --dump-sass build/libkite.a 2>/dev/null | grep -cE "LDL|STL" | sed 's/^/local-memory instructions in SASS: /'
echo "---- kite-bench"; cat "$OUT/bench.txt"
echo "---- vs torch"; tail -25 "$OUT/vs_torch.txt"
