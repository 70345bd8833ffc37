# Session 25, call 1: layernorm's register cluster rows of 1024 threads (bf16, f32; clusters of 2, 4, 8; new
# this session, rank 6) tested by name, layernorm's variants timed at 64 K - 256 K; on an H200 with all 6
# passing, layernorm retuned at every N and softmax / cross_entropy from 24 K (as s24_call2.sh), then the
# three against torch.compile.
export KITE_COMMIT=${KITE_COMMIT:-s25}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME='layernorm_*_reg_t1024_*_x*' KITE_CALL_S=${S25_TEST_S:-150} \
  bash bench/device_run.sh byname > $OUT/bn.log 2>&1
grep -E "build:|prebuilt" $OUT/bn.log; tail -3 $OUT/build.log; grep -A8 "tested by name" $OUT/bn.log
timeout 100 build/kite-bench --variants --op layernorm --n 65536,131072,262144 > $OUT/variants.txt 2>&1
echo "kite-bench --variants rc=$?"
awk '$4 ~ /^[0-9]+$/ { print $1, $2, $4, $(NF-4), $(NF-2), ($5 == "*" ? "dispatched" : "") }' $OUT/variants.txt |
  sort -k1,2 -k3n -k5nr | awk '{ k = $1 $2 $3; if (n[k]++ < 4 || $6 != "" || $4 ~ /t1024/) print }'
if echo "$G" | grep -q H200 && grep -q " 0 failures, 0 errors" $OUT/summary.txt && grep -q "processes done: 6 of 6" $OUT/summary.txt; then
  KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 \
    KITE_CALL_S=${S25_TUNE_S:-130} bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
  [ "${S25_TUNE2_S:-100}" -gt 0 ] && KITE_TUNE_KEEP_S=40 KITE_OPS=softmax,cross_entropy KITE_VS_OPS=softmax,cross_entropy \
    KITE_TUNE_FROM=24576 KITE_CALL_S=${S25_TUNE2_S:-100} bash bench/device_run.sh retune > $OUT/retune2.log 2>&1
  grep -E "^tune|table|vs_torch rc|^(softmax|cross_entropy|layernorm) " $OUT/summary.txt
else echo "no retune (not an H200, or a t1024 row failed or was not run)"; fi
cd $OUT && tar czf logs.tgz *.log variants.txt 2>/dev/null; rm -f *.log
