# Session 23, call 5 (call 4 was never started: no machine came), on branch t1024 (wip/t1024-clusters' template change on main)
# of 1024 threads (softmax, cross_entropy; bf16, f16; clusters of 2, 4, 8) and all 121 layernorm variants
# (resident rows: one CTA barrier, cta_moments / merge_parts; bf16 / f32 reg t512 cluster rows at two CTAs an
# SM) tested by name, every
# softmax / cross_entropy / layernorm variant timed at 16 K, 128 K, 256 K, and, on an H200 with no failure, the three
# ops retuned (layernorm at every N, the others from 24 K) and run against torch.compile.
export KITE_COMMIT=${KITE_COMMIT:-t1024}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME='softmax_*_bulk_t1024_*_x* cross_entropy_*_bulk_t1024_*_x* layernorm_bf16_* layernorm_f16_* layernorm_f32_*' KITE_CALL_S=${S23_TEST_S:-270} \
  bash bench/device_run.sh byname > $OUT/bn.log 2>&1
grep -E "build:|prebuilt" $OUT/bn.log; tail -3 $OUT/build.log; grep -A8 "tested by name" $OUT/bn.log
timeout 100 build/kite-bench --variants --op softmax,cross_entropy,layernorm --n 16384,131072,262144 > $OUT/variants.txt 2>&1
echo "kite-bench --variants rc=$?"
awk '$4 ~ /^[0-9]+$/ { print $1, $4, $(NF-4), $(NF-2), ($5 == "*" ? "dispatched" : "") }' $OUT/variants.txt |
  sort -k1,1 -k2n -k4nr | awk '{ k = $1 " " $2; if (n[k]++ < 5 || $5 != "" || $3 ~ /t1024/) print }' | sort -u -k1,1 -k2n -k4nr
if echo "$G" | grep -q H200 && grep -q " 0 failures, 0 errors" $OUT/summary.txt && grep -q "processes done: 133 of 133" $OUT/summary.txt; then
  # layernorm at every N (its resident rows changed), softmax and cross_entropy from 24 K (their cluster rows)
  KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 \
    KITE_CALL_S=${S23_TUNE_S:-110} bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
  KITE_TUNE_KEEP_S=40 KITE_OPS=softmax,cross_entropy KITE_VS_OPS=softmax,cross_entropy KITE_TUNE_FROM=24576 \
    KITE_CALL_S=${S23_TUNE2_S:-100} bash bench/device_run.sh retune > $OUT/retune2.log 2>&1
  grep -E "^tune|table|vs_torch rc|^(softmax|cross_entropy|layernorm) " $OUT/summary.txt
else echo "no retune (not an H200, or a t1024 row failed or was not run)"; fi
cd $OUT && tar czf logs.tgz *.log variants.txt 2>/dev/null; rm -f *.log
