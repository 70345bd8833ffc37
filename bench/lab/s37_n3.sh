# Session 37: register rows of three accesses a thread (wip/s37-n3: nv = 3, rows of 1.5 * 2^k), whichever
# GPU comes.  H200: the H200 plan (s37_call1.sh; its layernorm tests and retune take the new rows in).
# Else: the 90 new variants tested by name, every forward variant timed at 1.5 * 2^k (and 2^k beside),
# then (no failure) the four forward ops retuned on this GPU for bf16 and f16, merged into
# bench/tuned/h100 (tuned_merge.py), the table regenerated, the dispatched rows and vs_torch.py there.
export KITE_COMMIT=${KITE_COMMIT:-s37}
source .deps/env.sh 2>/dev/null
END=${S37_END:-560}
# S37_OPS / S37_BYNAME / S37_DTYPES: the ops, the variants tested by name and the dtypes retuned
# (layernorm_bwd's three-access rows, wip/s37-lnb3: S37_OPS=layernorm_bwd S37_BYNAME='layernorm_bwd_*_n3_*')
OPS=${S37_OPS:-rmsnorm,softmax,cross_entropy,layernorm}
NS=1536,2048,3072,4096,6144,8192,12288,16384
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 && exec bash bench/lab/s37_call1.sh
KITE_BYNAME=${S37_BYNAME:-'*_n3_*'} KITE_CALL_S=${S37_BYNAME_S:-230} bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "build:|prebuilt" $OUT/byname.log | head -3
grep -A3 "tested by name" $OUT/summary.txt
grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
timeout 100 build/kite-bench --variants --warmup 3 --reps 20 --op $OPS --n $NS > $OUT/var.txt 2>&1
echo "variants rc=$? ($SECONDS s)"
source bench/lab/variant_rows.sh
variant_rows $OUT/var.txt > $OUT/all.txt
# per op and N: the dispatched row, the fastest n3 row and the fastest other
awk '$3 == "*" { d[$1" "$2] = $4" "$5 } $3 == "-" && $4 ~ /_n3_/ { k = $1" "$2; if (!(k in b3) || $5 < t3[k]) { b3[k] = $4; t3[k] = $5 } }
     $3 == "-" && $4 !~ /_n3_/ { k = $1" "$2; if (!(k in bo) || $5 < to[k]) { bo[k] = $4; to[k] = $5 } }
     END { for (k in d) printf "%-22s dispatched %s | best n3 %s %s | best other %s %s | n3/other %.3f\n", k, d[k], b3[k], t3[k], bo[k], to[k], t3[k] / to[k] }' \
  $OUT/all.txt | sort -k1,1 -k2n
grep -q " 0 failures, 0 errors" $OUT/summary.txt || { echo "a test failed: no retune"; exit 0; }
for d in ${S37_DTYPES:-bf16 f16}; do
  for op in ${OPS//,/ }; do
    [ $(( END - SECONDS )) -gt ${S37_TUNE_KEEP:-120} ] || { echo "tune $op $d: not run"; continue; }
    timeout 60 build/kite-bench --tune $OUT/t.$op.$d.tsv --times $OUT/t.$op.$d.times.tsv --op $op --dtype $d \
      > $OUT/tune.$op.$d.log 2>&1 && T+=" $OUT/t.$op.$d"; echo "tune $op $d rc=$? ($SECONDS s)"
  done
done
[ -n "$T" ] && python3 bench/lab/tuned_merge.py bench/tuned/h100 bench/tuned/h200 bench/tuned/h100 $T
cp bench/tuned/h100.tsv bench/tuned/h100.times.tsv $OUT/
{ make gen && make -j16 build/libkite.so build/kite-bench; } > $OUT/regen.log 2>&1; echo "regen rc=$? ($SECONDS s)"
grep "kite-gen:" $OUT/regen.log
timeout 40 build/kite-bench --op $OPS --n $NS > $OUT/bench_after.txt 2>&1
grep -v "^#" $OUT/bench_after.txt | awk '{ print $1, $4, $5, $6, $NF }'
left=$(( END - SECONDS - 5 ))
[ $left -gt 30 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/vs_torch.py --op $OPS --n 1536,3072,6144,12288 \
  > $OUT/vs_n3.txt 2>&1; echo "vs_torch rc=$? ($SECONDS s)"
grep -E "^[a-z_]+ +[0-9]+ +[0-9.]+ |MISMATCH|ERROR" $OUT/vs_n3.txt
cd $OUT && tar czf logs.tgz *.log *.txt t.*.tsv 2>/dev/null; rm -f *.log var.txt vs_n3.txt bench_after.txt t.*.tsv
