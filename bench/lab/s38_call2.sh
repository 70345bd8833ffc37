# Session 38, call 2, whichever GPU comes (name no kind; carry [".deps", ".prebuilt"]):
#  H200: the H200 plan (s37_call1.sh: the suspend-hint check, layernorm by name, the retune).
#  H100: the tune's size (NOTES Next (session 38) 3): the H100 set's two outliers at M*N = 2^28,
#        softmax_bwd 64 K (reg t256 x8 picked, bulk t512 x4 4.7% faster) and rmsnorm_bwd 128 K (2.0%,
#        bulk t256 x16), every variant timed at M*N = 2^26 (the tune's size), 2^27 and 2^28.
# S38_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s38}
source .deps/env.sh 2>/dev/null
source bench/lab/variant_rows.sh
END=${S38_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 && S37_END=$END exec bash bench/lab/s37_call1.sh
bash bench/device_run.sh build > $OUT/build.log 2>&1; echo "build rc=$? ($SECONDS s)"
grep -E "prebuilt|build:" $OUT/build.log | head -2
for e in 67108864 134217728 268435456; do
  for on in softmax_bwd:65536 rmsnorm_bwd:131072; do
    op=${on%:*} n=${on#*:}
    [ $(( END - SECONDS )) -gt 40 ] || break 2
    timeout 90 build/kite-bench --variants --warmup 3 --reps 30 --op $op --n $n --elems $e > $OUT/v.$op.$n.$e.txt 2>&1
    echo "== $op $n M*N=$e rc=$? ($SECONDS s)"; variant_rows $OUT/v.$op.$n.$e.txt | variant_top 4
  done
done
cd $OUT && tar czf logs.tgz *.log *.txt 2>/dev/null; rm -f *.log v.*.txt
