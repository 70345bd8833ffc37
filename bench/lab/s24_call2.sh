# Session 24, call 2: wip/s23-rows' kernels passed their tests by name on an H100 (call 1, s23_call5.sh:
# 133 of 133); on an H200, retune layernorm at every N and softmax / cross_entropy from 24 K, then run the
# three against torch.compile.  Anything else: the GPU's name only (the rules are the H200's).
export KITE_COMMIT=${KITE_COMMIT:-s24}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: no retune"; exit 0; }
KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 \
  KITE_CALL_S=${S24_TUNE_S:-130} bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
KITE_TUNE_KEEP_S=40 KITE_OPS=softmax,cross_entropy KITE_VS_OPS=softmax,cross_entropy KITE_TUNE_FROM=24576 \
  KITE_CALL_S=${S24_TUNE2_S:-100} bash bench/device_run.sh retune > $OUT/retune2.log 2>&1
grep -E "^tune|table|vs_torch rc|^(softmax|cross_entropy|layernorm) |prebuilt|build:" $OUT/summary.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
