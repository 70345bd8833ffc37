# Session 27, with ~400 s of device time left: on an H200 only, layernorm retuned at every N (the
# 1024-thread register cluster rows, tested by name on H100s in sessions 25-26, join the H200 table),
# then layernorm against torch.compile. On an H100: nothing.
export KITE_COMMIT=${KITE_COMMIT:-s27}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: nothing to do"; exit 0; }
KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 KITE_CALL_S=${S27_CALL_S:-240} \
  bash bench/device_run.sh retune > $OUT/retune.log 2>&1
grep -E "^tune|table|vs_torch rc|^layernorm " $OUT/summary.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
