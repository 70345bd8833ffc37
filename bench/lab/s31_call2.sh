# Session 31, call 2, an H200: s29_call1.sh's retune with no tests by name first. Call 1 of this
# session (7a6e2824, H100) tested all 127 layernorm forward variants by name (127 checks, 0
# failures), and the H200 runs the same sm_90a objects (.prebuilt of 3d1e534d; kernels unchanged
# since).  S31_END (default 560 s) bounds it.  Copy h200*.tsv from $OUT to bench/tuned/, make gen.
export KITE_COMMIT=${KITE_COMMIT:-s31}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: no retune"; exit 0; }
END=${S31_END:-560}
KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 KITE_CALL_S=200 \
  bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
echo "retune layernorm: rc=$? ($SECONDS s)"
if [ $(( END - SECONDS )) -ge 70 ]; then
  PYTHONUNBUFFERED=1 timeout 70 python3 bench/vs_torch.py --op rmsnorm --n 1024,4096,16384,65536 > $OUT/vs_torch_rms.txt 2>&1
  echo "vs_torch rmsnorm: rc=$? ($SECONDS s)"
fi
[ $(( END - SECONDS )) -ge 100 ] && KITE_TUNE_KEEP_S=40 KITE_OPS=softmax,cross_entropy KITE_VS_OPS=softmax,cross_entropy \
  KITE_TUNE_FROM=24576 KITE_CALL_S=$(( END - SECONDS > 150 ? 150 : END - SECONDS )) bash bench/device_run.sh retune > $OUT/retune2.log 2>&1
left=$(( END - SECONDS ))
[ $left -gt 60 ] && KITE_TUNE_KEEP_S=20 KITE_OPS=softmax_bwd KITE_VS_OPS=softmax_bwd KITE_TUNE_FROM=4096 \
  KITE_CALL_S=$left bash bench/device_run.sh retune > $OUT/retune3.log 2>&1
grep -E "^tune|table|vs_torch rc|^(softmax|cross_entropy|layernorm|softmax_bwd) +[0-9]" $OUT/summary.txt | head -60
grep -E "^rmsnorm +[0-9]" $OUT/vs_torch_rms.txt 2>/dev/null
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
