# Session 22, call 5 (`bash bench/lab/s22_call5.sh`, 14a1c18b's .prebuilt carried): on an H200 layernorm,
# softmax and cross_entropy retuned from N = 24 K (their cluster rows merge by cluster_butterfly now), then
# those ops against torch.compile; on an H100 the f16 / f32 cluster rows of softmax and cross_entropy tested
# by name (their bf16 ones and every layernorm cluster row passed after b60e5e6e's fix; these only before it).
export KITE_COMMIT=${KITE_COMMIT:-14a1c18b}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  KITE_TUNE_KEEP_S=100 KITE_OPS=layernorm,softmax,cross_entropy KITE_VS_OPS=layernorm,softmax,cross_entropy \
    KITE_TUNE_FROM=24576 KITE_CALL_S=${S22_CALL_S:-230} bash bench/device_run.sh retune > $OUT/retune.log 2>&1
  grep -E "build:|prebuilt" $OUT/retune.log; cat $OUT/summary.txt
else
  KITE_BYNAME='softmax_f16_*_x* softmax_f32_*_x* cross_entropy_f16_*_x* cross_entropy_f32_*_x*' KITE_CALL_S=${S22_CALL_S:-150} \
    bash bench/device_run.sh byname > $OUT/bn.log 2>&1; grep -E "build:|prebuilt" $OUT/bn.log; grep -A8 "tested by name" $OUT/bn.log
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
