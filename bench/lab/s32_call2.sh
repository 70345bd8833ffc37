# Session 32, call 2, after call 1 tested the wide cluster rows and div_fast by name.
#  H200: the retune (the issue targets' GPU): layernorm at every N (the wide rows among them) against
#        torch.compile, rmsnorm against torch.compile, then softmax / cross_entropy from 24 K and
#        softmax_bwd from 4 K in the time left.  Copy h200*.tsv from $OUT to bench/tuned/.
#  H100: layernorm tuned at every N per dtype ($OUT/t100ln_<dtype>.*), to merge with
#        bench/lab/tuned_merge.py bench/tuned/h100 bench/tuned/h200 bench/tuned/h100 <dir>/t100ln_...
# S32_TESTED names the call that tested the objects; S32_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s32}
source .deps/env.sh 2>/dev/null
END=${S32_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G; objects tested by ${S32_TESTED:?}"
if echo "$G" | grep -q H200; then
  KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 KITE_CALL_S=150 \
    bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
  if [ $(( END - SECONDS )) -ge 70 ]; then   # issue 2's rmsnorm at 1 K / 16 K
    PYTHONUNBUFFERED=1 timeout 70 python3 bench/vs_torch.py --op rmsnorm --n 1024,4096,16384,65536 > $OUT/vs_torch_rms.txt 2>&1
    echo "vs_torch rmsnorm: rc=$? ($SECONDS s)"; grep -E "^rmsnorm +[0-9]" $OUT/vs_torch_rms.txt
  fi
  [ $(( END - SECONDS )) -ge 100 ] && KITE_TUNE_KEEP_S=40 KITE_OPS=softmax,cross_entropy KITE_VS_OPS=softmax,cross_entropy \
    KITE_TUNE_FROM=24576 KITE_CALL_S=100 bash bench/device_run.sh retune > $OUT/retune3.log 2>&1
  left=$(( END - SECONDS ))
  [ $left -gt 60 ] && KITE_TUNE_KEEP_S=20 KITE_OPS=softmax_bwd KITE_VS_OPS=softmax_bwd KITE_TUNE_FROM=4096 \
    KITE_CALL_S=$left bash bench/device_run.sh retune > $OUT/retune4.log 2>&1
  grep -E "^tune|table|vs_torch rc|^(softmax|cross_entropy|layernorm|rmsnorm|softmax_bwd) +[0-9]" $OUT/summary.txt | head -70
else
  for d in bf16 f16 f32; do
    left=$(( END - SECONDS - 10 )); [ $left -gt 60 ] || break
    timeout $left build/kite-bench --tune $OUT/t100ln_$d.tsv --times $OUT/t100ln_$d.times.tsv --op layernorm \
      --dtype $d > $OUT/tune_$d.log 2>&1
    echo "layernorm $d tune rc=$? ($SECONDS s)"; tail -1 $OUT/tune_$d.log
    grep -hE "N=(32768|65536|131072|262144) " $OUT/tune_$d.log
  done
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
