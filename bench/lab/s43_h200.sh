# Session 43: the H200 set (session 23's, before every kernel of sessions 24-42) retuned, then main's
# kernels against torch.compile there.  Only on an H200; on any other GPU it stops at once (the H100's set
# and table are current).  Carry [".deps", ".prebuilt"].  Steps, one call each:
#   S43_STEP=tune   the eight ops tuned (bf16), the ops with new rows for the H200's long rows first,
#                   merged into bench/tuned/h200.* (tune_ops); kite-bench at the issues' six N, copy in
#                   the same run.  Copy h200*.tsv from $OUT into bench/tuned/, edit line 1, make gen.
#   S43_STEP=quick  a short call: kite-bench at the six N on the current set, then layernorm tuned.
#   S43_STEP=table  vs_torch.py op by op at the six N, the ops last seen under torch.compile first.
export KITE_COMMIT=${KITE_COMMIT:-s43}
source .deps/env.sh 2>/dev/null
source bench/lab/lab_steps.sh
END=${S43_END:-560}
NS=$ISSUE_NS
gpu_is H200 || { echo "not an H200: nothing run"; exit 0; }
if [ "${S43_STEP:-tune}" = table ]; then
  S37_DONE=x S37_END=$END \
    S37_OPS="rmsnorm layernorm softmax_bwd layernorm_bwd softmax cross_entropy rmsnorm_bwd cross_entropy_bwd" \
    bash bench/lab/s37_table.sh
  cd $OUT && tar czf table.tgz *.txt *.csv 2>/dev/null; rm -f *.txt *.csv; exit 0
fi
lab_build
if [ "${S43_STEP:-tune}" = quick ]; then   # a short call: kite-bench on the current set, then layernorm tuned
  timeout 150 build/kite-bench --op rmsnorm,softmax,cross_entropy,layernorm,rmsnorm_bwd,softmax_bwd,cross_entropy_bwd,layernorm_bwd --n $NS > $OUT/bench_before.txt 2>&1; echo "bench rc=$? ($SECONDS s)"
  bench_rows $OUT/bench_before.txt
  [ $(( END - SECONDS )) -gt 70 ] && tune_one layernorm bf16; echo "tune rc=$? ($SECONDS s)"
  exit 0
fi
tune_ops layernorm,layernorm_bwd,rmsnorm_bwd,softmax,rmsnorm,cross_entropy,softmax_bwd,cross_entropy_bwd bf16 h200 $END 100
timeout $(( END - SECONDS - 5 )) build/kite-bench --op all --n $NS > $OUT/bench_after.txt 2>&1; echo "bench rc=$? ($SECONDS s)"
bench_rows $OUT/bench_after.txt
cd $OUT && tar czf logs.tgz *.log t.*.tsv 2>/dev/null; rm -f *.log t.*.tsv
