# Session 45's first call (written in session 44), whichever GPU comes; run from main with carry
# [".deps", ".prebuilt"] (both trees' objects: main only links).
#   H200: bench/lab/s43_h200.sh's tune (S43_STEP, default tune): the H200 set retuned, confirming now.
#   H100: the tune's confirmation tried (kite-bench --tune --confirm, session 44, not yet run on a GPU)
#         on the two backward ops with sums over rows, where session 43 saw the 2^26 picks lose at 2^28:
#     1. kite-bench at the issues' six N on the committed table (bench_before.txt);
#     2. both ops tuned in bf16 with the confirm, merged into bench/tuned/h100.*, the table rebuilt
#        (tune_ops; each "tune" line's "(M=...)" says which rows decided);
#     3. kite-bench again on the same machine (bench_after.txt) and after / before per row.
#   Keep the h100*.tsv from $OUT only if after / before <= 1 beyond noise (two rounds of the bench).
export KITE_COMMIT=${KITE_COMMIT:-s44}
source .deps/env.sh 2>/dev/null
source bench/lab/lab_steps.sh
END=${S44_END:-540}
NS=$ISSUE_NS
OPS=rmsnorm_bwd,layernorm_bwd
if gpu_is H200; then S43_END=$END exec bash bench/lab/s43_h200.sh; fi
lab_build
bench_twice() {   # bench_twice FILE: kite-bench on OPS at NS, two rounds into FILE
  for r in 1 2; do timeout 100 build/kite-bench --op $OPS --n $NS; done > $1 2>&1; echo "bench rc=$? ($SECONDS s)"
}
bench_twice $OUT/bench_before.txt
tune_ops $OPS bf16 h100 $(( END - 110 )) 60
tune_picks
bench_twice $OUT/bench_after.txt
# op N: each file's variant and median over its rounds, and after / before
awk 'FNR == 1 { f++ } $1 ~ /_bwd$/ && $4 ~ /^[0-9]+$/ { k = $1 " " $4; v[f, k] = $5; t[f, k] = t[f, k] " " $6; key[k] }
     function med(s,   a, n, i, j, x) { n = split(s, a, " ")   # insertion sort: mawk has no asort
       for (i = 2; i <= n; i++) { x = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
     END { for (k in key) printf "%-22s %-50s %8.1f  %-50s %8.1f  %.3f\n", k, v[1, k], med(t[1, k]), v[2, k],
                                 med(t[2, k]), med(t[2, k]) / med(t[1, k]) }' $OUT/bench_before.txt $OUT/bench_after.txt | sort -k1,1 -k2n
cd $OUT && tar czf logs.tgz *.log t.*.tsv 2>/dev/null; rm -f *.log t.*.tsv
