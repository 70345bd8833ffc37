# Session 40, call 2 (warm or fresh machine; carry [".deps", ".prebuilt"]): the variants that call 1's
# check did not reach (S40_LIST, default bench/lab/s40/check/not_run.txt, its long-row processes cut
# at 440 s), by name: device_run.sh byname, one process each with its op's test binary, 16 at a
# time, every one stopped by S40_END (default 540 s) from the start.
export KITE_COMMIT=${KITE_COMMIT:-s40}
source .deps/env.sh 2>/dev/null
nvidia-smi --query-gpu=name --format=csv,noheader
KITE_BYNAME="$(tr '\n' ' ' < "${S40_LIST:-bench/lab/s40/check/not_run.txt}")" KITE_CALL_S=${S40_END:-540} \
  bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/byname.log | head -2
grep -A12 "tested by name" $OUT/summary.txt
echo "variants that printed their line: $(grep -cE 'shapes, worst|^variant .*; worst' $OUT/byname_tests.log)"
cd $OUT && gzip -f byname_tests.log; tar czf logs2.tgz *.txt *.gz *.log 2>/dev/null; rm -f *.txt *.gz *.log
