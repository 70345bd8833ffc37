# Session 31, call 5, any GPU: layernorm's cluster rows divide by the reciprocal (div_fast,
# __fdividef) in their per-row reductions, where eight IEEE divisions a row a thread ran (the other
# layernorm variants compile to the same PTX as before).
#  1. every layernorm forward cluster variant by name;
#  2. A/B in one call: the carried kite-bench of 7a6e2824 (.abbranch/oldbench.tar.xz; its layernorm
#     kernels are 4b500750's) against this tree's, every bf16 cluster row at 32 K-256 K, three rounds
#     alternating (M·N = 2^28); per variant and N the median of the rounds, and new / old.
# S31_END (default 560 s) bounds it.  For wip/s31-shift (every resident row changed):
# S31_BYNAME='layernorm_bf16_* layernorm_f16_* layernorm_f32_*' S31_BYNAME_S=200 S31_AB_ONLY='*'
# S31_AB_N=1024,4096,16384,65536,262144.
export KITE_COMMIT=${KITE_COMMIT:-s31}
source .deps/env.sh 2>/dev/null
END=${S31_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME=${S31_BYNAME:-'layernorm_bf16_*_x* layernorm_f16_*_x* layernorm_f32_*_x*'} KITE_CALL_S=${S31_BYNAME_S:-120} bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "prebuilt" $OUT/byname.log; grep -A4 "tested by name" $OUT/summary.txt
grep -E "layernorm.*(Failure|Error)" $OUT/byname_tests.log | head -5
if ! grep -q " 0 failures, 0 errors" $OUT/summary.txt; then echo "a test failed: stop"; cd $OUT && tar czf logs.tgz *.log; rm -f *.log; exit 0; fi
tar xJf .abbranch/oldbench.tar.xz -C /tmp
for r in 1 2 3; do
  for b in old new; do
    [ $(( END - SECONDS )) -ge 30 ] || break 2
    bin=build/kite-bench; [ $b = old ] && bin=/tmp/kite-bench-old
    timeout 100 $bin --variants --only "${S31_AB_ONLY:-*_x*}" --op layernorm --n ${S31_AB_N:-32768,65536,131072,262144} > $OUT/ab.$b.$r.txt 2>&1
  done
done
echo "A/B done ($SECONDS s)"
# per variant and N: the median of the rounds, old and new (µs), and new / old
bash bench/lab/ab_median.sh layernorm $OUT > $OUT/ab.txt
# the dispatched rows, then each N's geomean of new / old
grep -hE "^layernorm .*=" $OUT/ab.new.1.txt $OUT/ab.old.1.txt
awk '{ s[$1] += log($NF); c[$1]++ } END { for (n in s) printf "N %7s: %3d variants, geomean new / old %.4f\n", n, c[n], exp(s[n] / c[n]) }' \
  $OUT/ab.txt | sort -k2n
sort -k7n $OUT/ab.txt | sed -n '1,4p;$p'
[ $(( END - SECONDS )) -ge 40 ] && KITE_NCU_OP=layernorm KITE_NCU_N=262144 \
  KITE_NCU_VARIANT=layernorm_bf16_reg_t512_r1_n4_v16_c0_p1_x16 KITE_CALL_S=$(( END - SECONDS - 5 )) bash bench/device_run.sh ncurow
# few files come back: the raw rounds and the logs in two archives
cd $OUT && tar czf ab_raw.tgz ab.old.* ab.new.* && rm -f ab.old.* ab.new.*
tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
