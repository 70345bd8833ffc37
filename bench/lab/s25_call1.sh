# Session 25, call 1, on branch wip/s25-t1024-reg: an A/B of layernorm in one call, on one GPU.
#  A: the tree as sent: layernorm's register cluster rows of 1024 threads (bf16, f32; x2-x8; new, rank 6)
#     tested by name; every bf16 layernorm variant timed at 1 K - 256 K.
#  B: bench/lab/s25/onepass.patch (each thread's statistics in one pass, x - k) applied to layernorm's
#     template, `make gen`, rebuilt: every layernorm variant tested by name, then timed as in A.
#     (The call itself copied the patched template in from an untracked file; the patch is that file's diff.)
# The two timings are printed side by side per variant (B / A, time).  No retune here.
export KITE_COMMIT=${KITE_COMMIT:-s25}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
NS=1024,4096,16384,65536,131072,262144
KITE_BYNAME='layernorm_*_reg_t1024_*_x*' KITE_CALL_S=${S25_TEST_S:-120} \
  bash bench/device_run.sh byname > $OUT/bn_a.log 2>&1
grep -E "build:|prebuilt" $OUT/bn_a.log; tail -2 $OUT/build.log; grep -A6 "tested by name" $OUT/bn_a.log
timeout 120 build/kite-bench --variants --op layernorm --n $NS > $OUT/variants_a.txt 2>&1
echo "A: kite-bench --variants rc=$?"
patch -p1 --forward < bench/lab/s25/onepass.patch || { echo "no B: bench/lab/s25/onepass.patch does not apply"; exit 0; }
( source .deps/env.sh && make gen 2>&1 | tail -1 )
rm -f $OUT/summary.txt
KITE_BYNAME='layernorm_*' KITE_CALL_S=${S25_TEST2_S:-280} bash bench/device_run.sh byname > $OUT/bn_b.log 2>&1
grep -E "build:|prebuilt" $OUT/bn_b.log; tail -2 $OUT/build.log; grep -A8 "tested by name" $OUT/bn_b.log
timeout 120 build/kite-bench --variants --op layernorm --n $NS > $OUT/variants_b.txt 2>&1
echo "B: kite-bench --variants rc=$?"
# per variant and N: A's time, B's, B / A; the 4 fastest of A at each N and the dispatched one
ab() { awk '$4 ~ /^[0-9]+$/ && $5 != "=" { v = $5 == "*" ? $6 "*" : $5; print $4, v, $(NF-3) }' "$1"; }
join <(ab $OUT/variants_a.txt | awk '{ print $1 "/" $2, $3 }' | sort) <(ab $OUT/variants_b.txt | awk '{ print $1 "/" $2, $3 }' | sort) |
  awk '{ split($1, k, "/"); printf "%s %s %.1f %.1f %.3f\n", k[1], k[2], $2, $3, $3 / $2 }' | sort -k1n -k3n > $OUT/ab.txt
awk '{ n[$1]++ } n[$1] <= 5 || $2 ~ /[*]$/' $OUT/ab.txt   # *: dispatched
awk '{ s += log($5); c++ } END { printf "B / A over %d variant-N pairs: geomean %.4f\n", c, exp(s / c) }' $OUT/ab.txt
grep -h copy $OUT/variants_a.txt $OUT/variants_b.txt | head -4
# what torch.compile runs for rmsnorm / layernorm at 1 K and 16 K (where it beats kite): config and loop shape
left=$(( 560 - SECONDS )); [ $left -gt 90 ] && left=90
[ $left -gt 20 ] && TORCH_LOGS=output_code timeout $left python3 bench/lab/s25_inductor.py > $OUT/inductor.txt 2> $OUT/inductor_code.log
echo "inductor rc=$? ($SECONDS s)"; grep -E "N=[0-9]+:" $OUT/inductor.txt | cut -c1-400
cd $OUT && tar czf logs.tgz *.log variants_*.txt 2>/dev/null; rm -f *.log
