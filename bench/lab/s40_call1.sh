# Session 40, call 1, whichever GPU comes (carry [".deps", ".prebuilt"]; /work/main detached at
# wip/s39-cluster3): the whole GPU check of the branch (device_run.sh check: the gemm suite against
# cuBLASLt, test_gemm, test_gpu's partitions beside test_norm's processes, every object's SASS). It
# covers the 280 cluster rows of three and main's 85 test_norm variants that session 39 did not reach.
# S40_TEST_S (default 440) bounds each test process.
export KITE_COMMIT=${KITE_COMMIT:-s40}
source .deps/env.sh 2>/dev/null
source bench/lab/lab_steps.sh
nvidia-smi --query-gpu=name --format=csv,noheader
KITE_TEST_S=${S40_TEST_S:-440} bash bench/device_run.sh check > $OUT/check.log 2>&1
echo "check rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/check.log | head -2
grep -vE "^\s*$" $OUT/check.log | grep -vE "^[0-9]+x[0-9]+x[0-9]+ " | tail -30 | cut -c1-200
# the variants that printed their line (after every assertion of theirs passed)
passed_variants $OUT/gpu.log $OUT/norm.log > $OUT/passed.txt
echo "variants that printed their line: $(wc -l < $OUT/passed.txt), of them n3 cluster rows: $(grep -c '_n3_.*_x' $OUT/passed.txt)"
awk -F'\t' 'NR > 1 && $2 != "gemm" { print $1 }' out/manifest.tsv | sort > /tmp/rowvars.txt
comm -23 /tmp/rowvars.txt $OUT/passed.txt > $OUT/not_run.txt; echo "row variants not reached: $(wc -l < $OUT/not_run.txt)"
head -5 $OUT/not_run.txt
cd $OUT && gzip -f gpu.log norm.log 2>/dev/null; tar czf logs.tgz *.log *.gz *.txt 2>/dev/null; rm -f *.log *.gz *.txt
