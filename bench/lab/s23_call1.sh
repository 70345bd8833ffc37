# Session 23, call 1 (`bash bench/lab/s23_call1.sh`, .prebuilt of HEAD's out/ carried).  On an H200: the six
# row ops whose cluster rows or table rows are stale retuned from N = 24 K (layernorm, softmax, cross_entropy:
# cluster_butterfly since session 22; rmsnorm_bwd, softmax_bwd, rmsnorm: session 21's list), then every op
# against torch.compile.  On an H100: the f16 / f32 cluster rows of softmax and cross_entropy tested by name.
export KITE_COMMIT=${KITE_COMMIT:-da07f381}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  KITE_TUNE_KEEP_S=240 KITE_OPS=layernorm,softmax,cross_entropy,rmsnorm_bwd,softmax_bwd,rmsnorm \
    KITE_VS_OPS=layernorm,softmax,cross_entropy,layernorm_bwd,rmsnorm_bwd,rmsnorm,softmax_bwd,cross_entropy_bwd \
    KITE_TUNE_FROM=24576 KITE_CALL_S=${S23_CALL_S:-570} bash bench/device_run.sh retune > $OUT/retune.log 2>&1
  grep -E "build:|prebuilt" $OUT/retune.log; cat $OUT/summary.txt
else
  KITE_BYNAME='softmax_f16_*_x* softmax_f32_*_x* cross_entropy_f16_*_x* cross_entropy_f32_*_x*' KITE_CALL_S=${S23_CALL_S:-200} \
    bash bench/device_run.sh byname > $OUT/bn.log 2>&1; grep -E "build:|prebuilt" $OUT/bn.log; grep -A8 "tested by name" $OUT/bn.log
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
