# Session 37: is the H100 set's pick the fastest at M*N = 2^28 for the long rows?
# kite-bench --variants (every variant, default runs) at 64 K-256 K, each op in turn,
# the dispatched row ('*') and the three (S37_TOP) fastest per op and N.
export KITE_COMMIT=${KITE_COMMIT:-s37}
source .deps/env.sh 2>/dev/null
END=${S37_END:-560}
nvidia-smi --query-gpu=name --format=csv,noheader
[ -x build/kite-bench ] || { bash bench/device_run.sh build > $OUT/build.log 2>&1; echo "build rc=$? ($SECONDS s)"; }
for op in ${S37_OPS:-softmax_bwd layernorm layernorm_bwd rmsnorm_bwd softmax rmsnorm cross_entropy_bwd}; do
  left=$(( END - SECONDS )); [ $left -ge 30 ] || { echo "not reached: $op"; continue; }
  timeout $(( left - 5 )) build/kite-bench --variants --warmup 3 --reps ${S37_REPS:-20} --op $op --n ${S37_N:-65536,131072,262144} \
    > $OUT/var_$op.txt 2>&1; echo "$op rc=$? ($SECONDS s)"
done
source bench/lab/variant_rows.sh
variant_rows $OUT/var_*.txt > $OUT/all.txt
variant_top ${S37_TOP:-3} < $OUT/all.txt
cd $OUT && tar czf var.tgz var_*.txt && rm -f var_*.txt
