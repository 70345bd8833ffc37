# Session 40 (prepared in session 39): cluster rows of three accesses (wip/s39-cluster3: nv = 3 for
# register cluster rows of 256 / 512 threads and 16-bit bulk cluster rows, 280 variants over the
# seven ops with cluster rows; rows of 1.5 * 2^k from 12 K to 192 K fill their cluster), whichever GPU
# comes.  carry [".deps", ".prebuilt"] (.prebuilt packed from this branch's build).
#   S40_STEP=test  the 280 tested by name (widest clusters first), every process stopped by S40_END
#   S40_STEP=time  every variant of the seven ops timed at 1.5 * 2^k and 2^k from 12 K (bf16, 2^28)
#   S40_STEP=tune  the ops of S40_OPS (default the seven) retuned on this GPU (S40_DTYPES, default bf16
#                  f16; whole tunes: tuned_merge.py replaces whole (op, dtype) groups), merged into
#                  bench/tuned/<gpu>, the table rebuilt, the dispatched rows and vs_torch.py at
#                  12 K - 192 K (S40_VS_NS); copy <gpu>*.tsv from $OUT into bench/tuned/, edit line 1, make gen
export KITE_COMMIT=${KITE_COMMIT:-s40}
source .deps/env.sh 2>/dev/null
source bench/lab/lab_steps.sh
END=${S40_END:-560}
OPS=${S40_OPS:-rmsnorm,softmax,cross_entropy,layernorm,softmax_bwd,rmsnorm_bwd,layernorm_bwd}
NS=12288,16384,24576,32768,49152,65536,98304,131072,196608,262144
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
GPU=h100; echo "$G" | grep -q H200 && GPU=h200
if [ "${S40_STEP:-test}" = test ]; then
  KITE_BYNAME='*_n3_*_x*' KITE_CALL_S=$(( END - 30 )) bash bench/device_run.sh byname > $OUT/byname.log 2>&1
  echo "byname rc=$? ($SECONDS s)"; grep -E "build:|prebuilt" $OUT/byname.log | head -3
  grep -A12 "tested by name" $OUT/summary.txt
  grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
  passed_variants $OUT/byname_tests.log > $OUT/passed.txt; echo "variants that printed their line: $(wc -l < $OUT/passed.txt)"
  cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log; exit 0
fi
bash bench/device_run.sh build > $OUT/build.log 2>&1; echo "build rc=$? ($SECONDS s)"
if [ "$S40_STEP" = time ]; then
  timeout $(( END - SECONDS - 20 )) build/kite-bench --variants --warmup 3 --reps 20 --op $OPS --n $NS > $OUT/var.txt 2>&1
  echo "variants rc=$? ($SECONDS s)"
  source bench/lab/variant_rows.sh
  variant_rows $OUT/var.txt > $OUT/all.txt
  # per op and N: the dispatched row, the fastest cluster row of three and the fastest other
  awk '$3 == "*" { d[$1" "$2] = $4" "$5 } $3 == "-" && $4 ~ /_n3_.*_x/ { k = $1" "$2; if (!(k in b3) || $5 < t3[k]) { b3[k] = $4; t3[k] = $5 } }
       $3 == "-" && $4 !~ /_n3_.*_x/ { k = $1" "$2; if (!(k in bo) || $5 < to[k]) { bo[k] = $4; to[k] = $5 } }
       END { for (k in d) printf "%-22s dispatched %s | best n3 cluster %s %s | best other %s %s | n3/other %.3f\n", k, d[k], b3[k], t3[k], bo[k], to[k], (k in t3) ? t3[k] / to[k] : 0 }' \
    $OUT/all.txt | sort -k1,1 -k2n | tee $OUT/best.txt
  cd $OUT && tar czf logs.tgz *.log var.txt 2>/dev/null; rm -f *.log var.txt; exit 0
fi
tune_ops "$OPS" "${S40_DTYPES:-bf16 f16}" $GPU $END 100
timeout 60 build/kite-bench --op $OPS --n $NS > $OUT/bench_after.txt 2>&1
grep -v "^#" $OUT/bench_after.txt | awk '{ print $1, $4, $5, $6, $NF }'
left=$(( END - SECONDS - 5 ))
[ $left -gt 30 ] && PYTHONUNBUFFERED=1 timeout $left python3 bench/vs_torch.py --op $OPS --n ${S40_VS_NS:-12288,24576,49152,98304,196608} \
  > $OUT/vs_c3.txt 2>&1; echo "vs_torch rc=$? ($SECONDS s)"
grep -E "^[a-z_]+ +[0-9]+ +[0-9.]+ |MISMATCH|ERROR" $OUT/vs_c3.txt
cd $OUT && tar czf logs.tgz *.log *.txt t.*.tsv 2>/dev/null; rm -f *.log *.txt t.*.tsv
