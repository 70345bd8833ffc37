# Session 26, call 4: does the best variant at N depend on M?  The table is tuned at M*N = 2^26 (H200);
# the issues measure at 2^28, where on an H100 (call 3) the dispatched variant ran 10-16% behind the best
# at softmax_bwd 16 K and the 32 K rows, the tune's cluster rows losing to plain ones.  Here every variant
# of every row op, bf16, at 4 K - 256 K, timed at both sizes on one GPU in one call.  Per op and N: the
# best at 2^26, its time at 2^28 over the best at 2^28 (what a 2^26 tune loses at 2^28), and the
# dispatched variant's time over the best at each size.  H200: session 25's retune first when
# S26_RETUNE=1 (bench/lab/s25_call2.sh), then this in the time left.
export KITE_COMMIT=${KITE_COMMIT:-s26}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200 && [ "${S26_RETUNE:-0}" = 1 ]; then S25_END=0 bash bench/lab/s25_call2.sh; fi
KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1   # the build alone
grep -E "build:|prebuilt" $OUT/build_only.log | head -3
OPS=rmsnorm,softmax,cross_entropy,layernorm,softmax_bwd,rmsnorm_bwd,layernorm_bwd,cross_entropy_bwd
for e in 26 28; do
  left=$(( 560 - SECONDS )); [ $left -lt 30 ] && break
  timeout $(( left / (e == 26 ? 3 : 1) )) build/kite-bench --variants --elems 2^$e --op $OPS \
    --n 4096,16384,32768,65536,131072,262144 > $OUT/v$e.txt 2>&1
  echo "2^$e: rc=$? ($SECONDS s)"
done
t() { awk '$4 ~ /^[0-9]+$/ && $5 != "=" { v = $5 == "*" ? $6 "*" : $5; print $1, $4, v, $(NF-3) }' "$1"; }
t $OUT/v26.txt > $OUT/t26.txt; t $OUT/v28.txt > $OUT/t28.txt
awk 'FNR == 1 { f++ } { k = $1 " " $2; v = $3; d = v ~ /[*]$/; sub(/[*]$/, "", v)
       if (f == 1) { if (!(k in b26) || $4 < b26[k]) { b26[k] = $4; n26[k] = v }; if (d) d26[k] = $4 }
       else { t28[k, v] = $4; if (!(k in b28) || $4 < b28[k]) { b28[k] = $4; n28[k] = v }; if (d) { d28[k] = $4 }; ks[k] = 1 } }
     END { for (k in ks) if (k in b26) printf "%-24s disp/best 2^26 %.3f 2^28 %.3f | best26@28/best28 %.3f | %s | %s\n",
             k, d26[k] / b26[k], d28[k] / b28[k], t28[k, n26[k]] / b28[k], n26[k], n28[k] }' $OUT/t26.txt $OUT/t28.txt |
  sort -k1,1 -k2n > $OUT/mdep.txt
sed 's/_v16_c/_c/; s/bf16_//g' $OUT/mdep.txt | cut -c1-200
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log t26.txt t28.txt
