# Session 37: the full table on whichever GPU comes, the merged kernels (main):
# kite-bench (every op, six N, copy in the same run), then vs_torch.py op by op
# (kite, torch.compile, eager; same process) until S37_END seconds.  Ops already in
# $S37_DONE (comma list) are skipped, so a second call finishes the set.
export KITE_COMMIT=${KITE_COMMIT:-s37}
source .deps/env.sh 2>/dev/null
END=${S37_END:-560}
NS=1024,4096,16384,65536,131072,262144
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G" | tee $OUT/gpu.txt
[ -x build/kite-bench ] || { bash bench/device_run.sh build > $OUT/build.log 2>&1; echo "build rc=$? ($SECONDS s)"; }
if [ -z "${S37_DONE:-}" ]; then
  timeout 150 build/kite-bench --op all --n $NS --csv $OUT/kite_bench.csv > $OUT/kite_bench.txt 2>&1
  echo "kite-bench rc=$? ($SECONDS s)"
fi
for op in ${S37_OPS:-softmax cross_entropy softmax_bwd cross_entropy_bwd rmsnorm_bwd layernorm rmsnorm layernorm_bwd}; do
  case ",${S37_DONE:-}," in *,$op,*) continue ;; esac
  left=$(( END - SECONDS )); [ $left -ge 60 ] || { echo "not reached: $op"; continue; }
  PYTHONUNBUFFERED=1 timeout $(( left - 10 )) python3 bench/vs_torch.py --op $op --n $NS \
    --csv $OUT/vs_$op.csv > $OUT/vs_$op.txt 2>&1
  echo "vs_torch $op rc=$? ($SECONDS s)"
done
grep -hE "^(rmsnorm|softmax|cross_entropy|layernorm)[a-z_]* +[0-9]" $OUT/kite_bench.txt 2>/dev/null | head -60
for f in $OUT/vs_*.txt; do grep -E "^[a-z_]+ +[0-9]" $f; grep -iE "mismatch|error" $f | head -3; done
