# Session 35, call 2, on call 1's warm machine (an H200 wanted): the y fold (branch s35-yfold: 16-bit
# layernorm's y as x * rs - mean * rs, one operation an element less; bench/lab/s34/yfold.patch) A/B
# against main's kite-bench, which call 1 left as build/kite-bench-main (else the carried
# .abbranch/oldbench.tar.xz): every bf16 layernorm variant at the N, S35_ROUNDS rounds
# alternating; then the fold's bf16 / f16 layernorm variants by name in the time left.
# S35_END (default 470 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s35-yfold}
source .deps/env.sh 2>/dev/null
END=${S35_END:-470}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if [ -x build/kite-bench-main ]; then cp build/kite-bench-main /tmp/kite-bench-old; old="call 1's main"
else tar xJf .abbranch/oldbench.tar.xz -C /tmp; old="carried 8d673ffe"; fi
bash bench/device_run.sh build > $OUT/build.log 2>&1
echo "build rc=$? ($SECONDS s); old: $old"; grep -E "prebuilt|build:" $OUT/build.log
for r in $(seq ${S35_ROUNDS:-5}); do
  for b in old new; do
    [ $(( END - SECONDS )) -ge 150 ] || break 2
    bin=build/kite-bench; [ $b = old ] && bin=/tmp/kite-bench-old
    timeout 100 $bin --variants --only '*' --op layernorm --n 1024,4096,16384,65536,131072,262144 > $OUT/ab.$b.$r.txt 2>&1
  done
done
echo "A/B done: $(ls $OUT/ab.new.*.txt | wc -l) rounds ($SECONDS s)"
python3 bench/lab/ab_rounds.py layernorm $OUT all > $OUT/ab.txt; grep "^N " $OUT/ab.txt
cd $OUT && tar czf ab_raw.tgz ab.old.* ab.new.* && rm -f ab.old.* ab.new.*; cd - >/dev/null
left=$(( END - SECONDS - 10 ))
if [ $left -gt 40 ]; then
  KITE_BYNAME='layernorm_bf16_* layernorm_f16_*' KITE_CALL_S=$left bash bench/device_run.sh byname > $OUT/byname.log 2>&1
  grep -A4 "tested by name" $OUT/summary.txt; grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
