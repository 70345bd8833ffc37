# Session 23, call 3: softmax_bwd, rmsnorm, layernorm and layernorm_bwd retuned at every N on an H200 (call 2's
# kite-bench --variants: softmax_bwd 16 K reg_t256 x2 388 us against the dispatched reg_t1024's 412 us; their
# rules under 24 K date from before sessions 18-22's changes), then those four against torch.compile.
export KITE_COMMIT=${KITE_COMMIT:-d0e53072}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: no tune"; exit 0; }
KITE_TUNE_KEEP_S=120 KITE_OPS=softmax_bwd,rmsnorm,layernorm,layernorm_bwd KITE_VS_OPS=softmax_bwd,rmsnorm,layernorm,layernorm_bwd \
  KITE_TUNE_FROM=64 KITE_CALL_S=${S23_CALL_S:-570} bash bench/device_run.sh retune > $OUT/retune.log 2>&1
grep -E "build:|prebuilt" $OUT/retune.log; cat $OUT/summary.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
