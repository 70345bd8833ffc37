# Session 31, call 4, any GPU: layernorm's bulk cluster rows read w and b through L1 (rowops
# global_w), so that two CTAs share an SM (t512; t256: four; t1024 bulk rows now fit at one).
#  1. every layernorm forward variant by name (the template changed for all of them; the others'
#     PTX differs only in scheduling);
#  2. A/B in one call: the carried kite-bench of 7a6e2824 (.abbranch/oldbench.tar.xz) against this
#     tree's, every bf16 cluster row at 32 K-256 K, three rounds alternating (M·N = 2^28);
#  3. ncu of the new bulk t512 x16 row at 256 K; on an H200 instead the layernorm retune
#     (copy h200*.tsv from $OUT to bench/tuned/, make gen).  S31_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s31}
source .deps/env.sh 2>/dev/null
END=${S31_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME='layernorm_bf16_* layernorm_f16_* layernorm_f32_*' KITE_CALL_S=210 bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "prebuilt" $OUT/byname.log; grep -A4 "tested by name" $OUT/summary.txt
grep -E "^[^ ]*layernorm.*(Failure|Error)" $OUT/byname_tests.log | head -5
if ! grep -q " 0 failures, 0 errors" $OUT/summary.txt; then echo "a test failed: stop"; cd $OUT && tar czf logs.tgz *.log; rm -f *.log; exit 0; fi
tar xJf .abbranch/oldbench.tar.xz -C /tmp
for r in 1 2 3; do
  for b in old new; do
    bin=build/kite-bench; [ $b = old ] && bin=/tmp/kite-bench-old
    timeout 60 $bin --variants --only '*_x*' --op layernorm --n 32768,65536,131072,262144 > $OUT/ab.$b.$r.txt 2>&1
  done
done
echo "A/B done ($SECONDS s)"
# per variant and N: the median of the rounds, old and new (µs), and new / old
bash bench/lab/ab_median.sh layernorm $OUT | tee $OUT/ab.txt
grep -h "bulk_t1024" $OUT/ab.new.?.txt   # new variants: no old time
grep -hE "^layernorm .*=" $OUT/ab.new.1.txt $OUT/ab.old.1.txt
if echo "$G" | grep -q H200; then
  [ $(( END - SECONDS )) -ge 160 ] && KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 \
    KITE_CALL_S=$(( END - SECONDS )) bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
  grep -E "^tune|table|vs_torch rc|^layernorm +[0-9]" $OUT/summary.txt | head -30
elif [ $(( END - SECONDS )) -ge 50 ]; then
  v=layernorm_bf16_bulk_t512_r1_n4_v16_c0_p2_x16
  timeout $(( END - SECONDS - 5 )) ncu --clock-control none --launch-skip 1 --launch-count 1 -k "regex:^layernorm_fwd$" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section SourceCounters \
    --metrics 'regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio' \
    build/kite-bench --op layernorm --n 262144 --warmup 0 --reps 1 --variants --only $v > $OUT/ncu.$v.txt 2>&1
  echo "== ncu $v rc=$? ($SECONDS s)"
  grep -E "Duration|DRAM Throughput|Registers Per|Grid Size|Block Size|Issued Warp|Achieved Occ|Branch Instructions  " $OUT/ncu.$v.txt | head -10
  grep -E "issue_stalled" $OUT/ncu.$v.txt | awk '{ print $NF, $1 }' | sort -rn | head -5
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
