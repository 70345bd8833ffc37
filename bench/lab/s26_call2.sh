# Session 26, call 2, on the tree with bench/lab/s26/warpcta_l2loop.patch applied (and `make gen`), two
# shapes torch.compile runs, for rmsnorm, layernorm and softmax:
#  - one-warp rows in CTAs of one warp (32 threads, one row a CTA, up to 32 CTAs an SM: inductor's
#    rmsnorm / layernorm 1 K), 1-4 accesses a thread (27 variants);
#  - streaming rows of 1024 threads, one access a chunk (8 K elements in 16-bit), the second pass from
#    L2, two CTAs an SM at 32 registers (inductor's layernorm 16 K), for those three and cross_entropy,
#    softmax_bwd, rmsnorm_bwd and cross_entropy_bwd (24 variants).
# The 51 new variants tested by name, then timed beside every other variant (the others are unchanged
# by the patch), then torch.compile on the same GPU for the ratio.
export KITE_COMMIT=${KITE_COMMIT:-s26}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME='rmsnorm_*_reg_t32_r1_* layernorm_*_reg_t32_r1_* softmax_*_reg_t32_r1_* *_loop_t1024_*' KITE_CALL_S=100 \
  bash bench/device_run.sh byname > $OUT/bn.log 2>&1
grep -E "build:|prebuilt" $OUT/bn.log; tail -1 $OUT/build.log; grep -A6 "tested by name" $OUT/bn.log
grep -hE "registers|spill" build/obj/*/*_reg_t32_r1_*.o.log build/obj/*/*_loop_t1024_*.o.log | sort | uniq -c | sort -rn | head -6
timeout 100 build/kite-bench --variants --op rmsnorm,layernorm,softmax --n 512,1024,2048 > $OUT/variants.txt 2>&1
echo "kite-bench --variants rc=$? ($SECONDS s)"
timeout 150 build/kite-bench --variants --op rmsnorm,layernorm,softmax,cross_entropy,softmax_bwd,rmsnorm_bwd,cross_entropy_bwd \
  --n 8192,16384,32768,65536 >> $OUT/variants.txt 2>&1
echo "kite-bench --variants rc=$? ($SECONDS s)"
# per op and N: the 4 fastest variants, the dispatched one (*) and the new ones
awk '$4 ~ /^[0-9]+$/ && $5 != "=" { v = $5 == "*" ? $6 "*" : $5; print $1, $4, v, $(NF-3), $(NF-2), $(NF-1) }' $OUT/variants.txt |
  sort -k1,1 -k2n -k4n | awk '{ k = $1 " " $2; if (n[k]++ < 4 || $3 ~ /[*]$/ || $3 ~ /_t32_r1_|_loop_t1024_/) print }' > $OUT/ab.txt
# per op and N: the dispatched variant's time, the best old one's, the best new one's (and its name), new / best old
awk '{ k = $1 " " $2; new = $3 ~ /_t32_r1_|_loop_t1024_/
       if ($3 ~ /[*]$/) d[k] = $4
       if (new && (!(k in bn) || $4 < bn[k])) { bn[k] = $4; nn[k] = $3 }
       if (!new && (!(k in bo) || $4 < bo[k])) bo[k] = $4; ks[k] = 1 }
     END { for (k in ks) if (k in bn) printf "%-22s disp %7.1f old %7.1f new %7.1f %.3f %s\n", k, d[k], bo[k], bn[k], bn[k] / bo[k], nn[k] }' \
  $OUT/ab.txt | sort -k1,1 -k2n
left=$(( 575 - SECONDS )); [ $left -gt 220 ] && left=220
[ $left -gt 40 ] && timeout $left python3 bench/vs_torch.py --op rmsnorm,layernorm,softmax,cross_entropy,softmax_bwd --n 1024,16384,65536 > $OUT/vs_torch.txt 2>&1
echo "vs_torch rc=$? ($SECONDS s)"; tail -18 $OUT/vs_torch.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
