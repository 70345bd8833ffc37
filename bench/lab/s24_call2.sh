# Session 24, call 2: wip/s23-rows' kernels passed their tests by name on an H100 (call 1, s23_call5.sh:
# 133 of 133); on an H200, retune layernorm at every N and softmax / cross_entropy from 24 K, then run the
# three against torch.compile.  Anything else (the rules are the H200's): the f16 / f32 softmax and
# cross-entropy cluster rows tested by name.
export KITE_COMMIT=${KITE_COMMIT:-s24}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if ! echo "$G" | grep -q H200; then   # not an H200: the f16 / f32 softmax and cross-entropy cluster rows by name
  # (not run since session 22's operand-swap fix; their 1024-thread rows were in call 1)
  KITE_BYNAME='softmax_f16_*_x* softmax_f32_*_x* cross_entropy_f16_*_x* cross_entropy_f32_*_x*' \
    KITE_CALL_S=${S24_TEST_S:-150} bash bench/device_run.sh byname > $OUT/bn.log 2>&1
  grep -E "build:|prebuilt" $OUT/bn.log; grep -A8 "tested by name" $OUT/bn.log; exit 0
fi
KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 \
  KITE_CALL_S=${S24_TUNE_S:-130} bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
[ "${S24_TUNE2_S:-100}" -gt 0 ] && KITE_TUNE_KEEP_S=40 KITE_OPS=softmax,cross_entropy KITE_VS_OPS=softmax,cross_entropy KITE_TUNE_FROM=24576 \
  KITE_CALL_S=${S24_TUNE2_S:-100} bash bench/device_run.sh retune > $OUT/retune2.log 2>&1
grep -E "^tune|table|vs_torch rc|^(softmax|cross_entropy|layernorm) |prebuilt|build:" $OUT/summary.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
