# Session 32, call 2, after call 1 tested the wide cluster rows and div_fast by name.
#  H200: s29_call1.sh --retune-only (the issue targets' GPU): layernorm at every N (the wide rows
#        among them) against torch.compile, rmsnorm against torch.compile, then softmax /
#        cross_entropy from 24 K and softmax_bwd from 4 K in the time left.  Copy h200*.tsv from
#        $OUT to bench/tuned/.
#  H100: layernorm tuned at every N per dtype (bench/lab/tune_dtypes.sh: $OUT/t100ln_<dtype>.*), to
#        merge with bench/lab/tuned_merge.py bench/tuned/h100 bench/tuned/h200 bench/tuned/h100 <dir>/t100ln_...
# S32_TESTED names the call that tested the objects; S32_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s32}
source .deps/env.sh 2>/dev/null
END=${S32_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G; objects tested by ${S32_TESTED:?}"
if echo "$G" | grep -q H200; then   # s29_call1.sh's retune: the same steps, and it packs the logs
  S29_TESTED=$S32_TESTED S29_END=$(( END - SECONDS )) exec bash bench/lab/s29_call1.sh --retune-only
fi
bash bench/lab/tune_dtypes.sh layernorm t100ln $(( END - SECONDS ))
grep -hE "N=(32768|65536|131072|262144) " $OUT/tune_*.log
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
