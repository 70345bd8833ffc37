# Session 26, call 5 (the last ~360 s of device time): on an H200 only, layernorm retuned at every N
# (its 1024-thread register cluster rows, in main since session 25, not yet in the table), then
# layernorm against torch.compile.  On an H100 it stops at once (call 4: the H200 table is right for
# M*N = 2^28 as far as an H100 can tell; an H100 table is a later session's).
export KITE_COMMIT=${KITE_COMMIT:-s26}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 \
  KITE_CALL_S=${S26_CALL_S:-290} bash bench/device_run.sh retune > $OUT/retune.log 2>&1
grep -E "build:|prebuilt|^tune|table|vs_torch rc|^layernorm " $OUT/summary.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
