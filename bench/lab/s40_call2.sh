# Session 40, call 2 (warm or fresh machine; carry [".deps", ".prebuilt"]): the variants that call 1's
# check did not reach (S40_LIST, default bench/lab/s40/check/not_run.txt, its long-row processes cut
# at 440 s), each in its own process (its op's test binary), 16 at a time, every one stopped by
# S40_END (default 540 s) from the start.
export KITE_COMMIT=${KITE_COMMIT:-s40}
source .deps/env.sh 2>/dev/null
END=${S40_END:-540}
nvidia-smi --query-gpu=name --format=csv,noheader
bash bench/device_run.sh build > $OUT/build.log 2>&1; echo "build rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/build.log | head -2
export DL=$(( $(date +%s) + END - SECONDS - 15 ))
rm -f /tmp/nr.*.log   # (a warm machine's earlier run)
# each variant and its op's test binary (test_norm's ops as device_run.sh's op_binary names them)
awk -F'\t' 'NR == FNR { want[$1] = 1; next } ($1 in want) {
  b = ($2 ~ /^(rmsnorm_bwd|layernorm_bwd|rmsnorm_res|layernorm)$/) ? "test_norm" : "test_gpu"; print $1, b }' \
  ${S40_LIST:-bench/lab/s40/check/not_run.txt} out/manifest.tsv > /tmp/nr_list.txt
xargs -P 16 -L 1 sh -c 'l=$(( DL - $(date +%s) )); [ $l -gt 5 ] || { echo "$0 not started"; exit 0; }
  CK_RUN_CASE=variants KITE_TEST_ONLY=$0 timeout $l build/$1 > /tmp/nr.$0.log 2>&1; echo "$0 rc=$?"' \
  < /tmp/nr_list.txt | sort > $OUT/nr_rc.txt
cat /tmp/nr.*.log > $OUT/nr.log
echo "processes: $(wc -l < $OUT/nr_rc.txt), rc=0: $(grep -c 'rc=0$' $OUT/nr_rc.txt) ($SECONDS s)"
grep -v 'rc=0$' $OUT/nr_rc.txt | head
grep -E "^[0-9]+%: Checks" $OUT/nr.log | awk '{ c += $3; f += $5; e += $7 } END { printf "%d checks, %d failures, %d errors\n", c, f, e }'
grep -E ":[EF]:" $OUT/nr.log | cut -c1-300 | head -5
echo "variants that printed their line: $(grep -cE 'shapes, worst|^variant .*; worst' $OUT/nr.log)"
cd $OUT && gzip -f nr.log; tar czf logs2.tgz *.txt *.gz *.log 2>/dev/null; rm -f *.txt *.gz *.log
