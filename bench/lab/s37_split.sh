# Session 37: cross_entropy_bwd's split rows of one and two chunks a CTA (wip/s37-split: axis
# split = {0, 1, 2, 4}), whichever GPU comes.  H200: the H200 plan first (s37_call1.sh).
# Else: the six new variants tested by name, every cross_entropy_bwd variant timed at 16 K-256 K,
# the op retuned on this GPU (every dtype; merged into bench/tuned/h100 by tuned_merge.py), the
# table regenerated, then kite-bench and vs_torch.py of the op.  S37_END bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s37}
source .deps/env.sh 2>/dev/null
END=${S37_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 && exec bash bench/lab/s37_call1.sh
KITE_BYNAME='cross_entropy_bwd_*_s1 cross_entropy_bwd_*_s2' KITE_CALL_S=120 \
  bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "build:|prebuilt" $OUT/byname.log | head -3
grep -A3 "tested by name" $OUT/summary.txt
grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
timeout 120 build/kite-bench --variants --op cross_entropy_bwd --n 16384,32768,65536,131072,262144 \
  > $OUT/variants.txt 2>&1; echo "variants rc=$? ($SECONDS s)"
grep -E "_s[124] |\* |= " $OUT/variants.txt | awk '{ printf "%-8s %-2s %-52s %8s %s\n", $4, ($5 ~ /^[*=]$/ ? $5 : ""), ($5 ~ /^[*=]$/ ? $6 : $5), ($5 ~ /^[*=]$/ ? $7 : $6), $NF }'
grep -q " 0 failures, 0 errors" $OUT/summary.txt || { echo "a test failed: no retune"; exit 0; }
left=$(( END - SECONDS - 90 ))
timeout $left build/kite-bench --tune $OUT/ceb.tsv --times $OUT/ceb.times.tsv --op cross_entropy_bwd \
  > $OUT/tune.log 2>&1; echo "tune rc=$? ($SECONDS s)"; tail -2 $OUT/tune.log
python3 bench/lab/tuned_merge.py bench/tuned/h100 bench/tuned/h200 bench/tuned/h100 $OUT/ceb
cp bench/tuned/h100.tsv bench/tuned/h100.times.tsv $OUT/
{ make gen && make -j16 build/libkite.so build/kite-bench; } > $OUT/regen.log 2>&1; echo "regen rc=$? ($SECONDS s)"
grep "kite-gen:" $OUT/regen.log
timeout 40 build/kite-bench --op cross_entropy_bwd --n 1024,4096,16384,65536,131072,262144 | tee $OUT/bench_after.txt | grep -v "^#"
left=$(( END - SECONDS - 5 ))
PYTHONUNBUFFERED=1 timeout $left python3 bench/vs_torch.py --op cross_entropy_bwd \
  --n 1024,4096,16384,65536,131072,262144 > $OUT/vs_ceb.txt 2>&1; echo "vs_torch rc=$? ($SECONDS s)"
grep -E "^cross_entropy_bwd +[0-9]|MISMATCH|ERROR" $OUT/vs_ceb.txt
cd $OUT && tar czf logs.tgz *.log *.txt 2>/dev/null && rm -f *.log variants.txt vs_ceb.txt bench_after.txt
