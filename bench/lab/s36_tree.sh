# Written in session 35 for session 36, any GPU, on branch wip/s35-tree (row reductions as
# butterflies: cta_reduce's warp slots and cluster_combine's ranks through lane_fold; 1075 files).
#   bash bench/lab/s36_tree.sh ab      A/B against the carried kite-bench of main
#                                      (.abbranch/oldbench.tar.xz): every bf16 variant of every row op
#                                      at the N, S36_ROUNDS rounds alternating; per op
#                                      bench/lab/ab_rounds.py (geomean new / old per N, dispatched row)
#   bash bench/lab/s36_tree.sh tests   every row variant by name (the widest clusters first), 16
#                                      processes at once, until S36_END
# Carry [".deps", ".prebuilt", ".abbranch"]; .prebuilt packed from the branch's full build
# (bench/prebuilt.sh /work/s35wt), .abbranch from main's build/kite-bench (as kite-bench-old).
export KITE_COMMIT=${KITE_COMMIT:-s35-tree}
source .deps/env.sh 2>/dev/null
END=${S36_END:-540}
OPS=rmsnorm,softmax,cross_entropy,layernorm,softmax_bwd,cross_entropy_bwd,rmsnorm_bwd,layernorm_bwd   # kite-bench's ops (not rmsnorm_res: its first A/B ran nothing)
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
bash bench/device_run.sh build > $OUT/build.log 2>&1
echo "build rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/build.log
case ${1:-ab} in
  ab)
    AB_ROUNDS=${S36_ROUNDS:-3} AB_STOP=$(( END - SECONDS - 130 )) \
      bash bench/lab/ab_run.sh $OUT $OPS '*' 1024,4096,16384,65536,131072,262144 ;;
  tests)
    awk -F'\t' 'NR > 1 && $2 != "gemm" { print $1 }' out/manifest.tsv | wc -l | sed 's/^/row variants: /'
    KITE_BYNAME='rmsnorm_* softmax_* cross_entropy_* layernorm_*' KITE_CALL_S=$(( END - SECONDS - 10 )) bash bench/device_run.sh byname > $OUT/byname.log 2>&1
    grep -A4 "tested by name" $OUT/summary.txt; grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
    cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log ;;
esac
