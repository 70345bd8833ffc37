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
old=; [ -x build/kite-bench-main ] && old=build/kite-bench-main
bash bench/device_run.sh build > $OUT/build.log 2>&1
echo "build rc=$? ($SECONDS s); old: ${old:-the carried .abbranch}"; grep -E "prebuilt|build:" $OUT/build.log
AB_OLD=$old AB_ROUNDS=${S35_ROUNDS:-5} AB_TIMEOUT=100 AB_STOP=$(( END - SECONDS - 150 )) \
  bash bench/lab/ab_run.sh $OUT layernorm '*' 1024,4096,16384,65536,131072,262144
left=$(( END - SECONDS - 10 ))
if [ $left -gt 40 ]; then
  KITE_BYNAME='layernorm_bf16_* layernorm_f16_*' KITE_CALL_S=$left bash bench/device_run.sh byname > $OUT/byname.log 2>&1
  grep -A4 "tested by name" $OUT/summary.txt; grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
