# Session 26, call 1: an A/B in one call, on one GPU, of 1024-thread register rows (one row a CTA,
# 16 elements a thread) at two CTAs an SM (32 registers), the shape torch.compile runs at 16 K.
#  A: the tree as sent (those rows at one CTA an SM, 64 registers): rmsnorm and layernorm timed, every
#     variant, at 8 K / 12 K / 16 K.
#  B: bench/lab/s26/t1024occ.patch (opts.t1024_occupancy = 2048 for rmsnorm and layernorm), `make gen`,
#     the 6 changed variants tested by name and rebuilt, then timed as in A.
# Then torch.compile on the same GPU (vs_torch.py, the dispatched variant: A's table), for the ratio.
export KITE_COMMIT=${KITE_COMMIT:-s26}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
NS=8192,12288,16384
KITE_BYNAME='rmsnorm_*_reg_t1024_r1_n2_* layernorm_*_reg_t1024_r1_n2_*' KITE_CALL_S=60 \
  bash bench/device_run.sh byname > $OUT/bn_a.log 2>&1
grep -E "build:|prebuilt" $OUT/bn_a.log; grep -A3 "tested by name" $OUT/bn_a.log
timeout 100 build/kite-bench --variants --op rmsnorm,layernorm --n $NS > $OUT/variants_a.txt 2>&1
echo "A: kite-bench --variants rc=$? ($SECONDS s)"
patch -p1 --forward < bench/lab/s26/t1024occ.patch || { echo "no B: the patch does not apply"; exit 0; }
( source .deps/env.sh && make gen 2>&1 | tail -1 )
rm -f $OUT/summary.txt
KITE_BYNAME='rmsnorm_*_reg_t1024_r1_n2_* layernorm_*_reg_t1024_r1_n2_*' KITE_CALL_S=60 \
  bash bench/device_run.sh byname > $OUT/bn_b.log 2>&1
grep -E "build:|prebuilt" $OUT/bn_b.log; tail -1 $OUT/build.log; grep -A6 "tested by name" $OUT/bn_b.log
grep -hE "registers|spill" build/obj/*/*_reg_t1024_r1_n2_v16_c0_p1.o.log | sort | uniq -c | head
timeout 100 build/kite-bench --variants --op rmsnorm,layernorm --n $NS > $OUT/variants_b.txt 2>&1
echo "B: kite-bench --variants rc=$? ($SECONDS s)"
ab() { awk '$4 ~ /^[0-9]+$/ && $5 != "=" { v = $5 == "*" ? $6 "*" : $5; print $4, v, $(NF-3) }' "$1"; }
join <(ab $OUT/variants_a.txt | awk '{ print $1 "/" $2, $3 }' | sort) <(ab $OUT/variants_b.txt | awk '{ print $1 "/" $2, $3 }' | sort) |
  awk '{ split($1, k, "/"); printf "%s %s %.1f %.1f %.3f\n", k[1], k[2], $2, $3, $3 / $2 }' | sort -k1n -k3n > $OUT/ab.txt
awk '{ n[$1]++ } n[$1] <= 4 || $2 ~ /[*]$/ || $2 ~ /t1024_r1_n2/' $OUT/ab.txt
grep -h copy $OUT/variants_a.txt $OUT/variants_b.txt | head -4
left=$(( 560 - SECONDS )); [ $left -gt 150 ] && left=150
[ $left -gt 40 ] && timeout $left python3 bench/vs_torch.py --op rmsnorm,layernorm --n 1024,16384 > $OUT/vs_torch.txt 2>&1
echo "vs_torch rc=$? ($SECONDS s)"; tail -8 $OUT/vs_torch.txt
cd $OUT && tar czf logs.tgz *.log variants_*.txt 2>/dev/null; rm -f *.log
