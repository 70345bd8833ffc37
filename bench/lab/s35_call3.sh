# Session 35, call 3, any GPU (branch s35-relaxed): the cluster exchange's wait made relaxed, with an
# acquire fence restricted to shared memory, in place of an acquiring wait at cluster scope (which
# compiles to CCTL.IVALL: ncu, H100, layernorm 256 K put 14% of the stall samples there).
#  1. A/B against the carried kite-bench of main (.abbranch/oldbench.tar.xz, a11bc34a's kernels):
#     every bf16 cluster variant of every row op at 64 K-256 K, S35_ROUNDS rounds alternating;
#     per op (bench/lab/ab_rounds.py) the geomean of new / old per N and the dispatched row.
#  2. every cluster variant by name in the time left (the widest clusters first).
# S35_END (default 480 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s35-relaxed}
source .deps/env.sh 2>/dev/null
END=${S35_END:-480}
OPS=softmax,cross_entropy,rmsnorm,layernorm,softmax_bwd,rmsnorm_bwd,layernorm_bwd
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
bash bench/device_run.sh build > $OUT/build.log 2>&1
echo "build rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/build.log
AB_ROUNDS=${S35_ROUNDS:-3} AB_STOP=$(( END - SECONDS - 200 )) bash bench/lab/ab_run.sh $OUT $OPS '*_x*' 65536,131072,262144
left=$(( END - SECONDS - 10 ))
KITE_BYNAME='*_x*' KITE_CALL_S=$left bash bench/device_run.sh byname > $OUT/byname.log 2>&1
grep -A4 "tested by name" $OUT/summary.txt; grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
