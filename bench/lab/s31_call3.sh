# Session 31, call 3, any GPU: why layernorm's cluster rows trail rmsnorm's at long rows (H100,
# session 26 at 256 K: layernorm's best 2.52 TB/s, rmsnorm's bulk t512 x16 2.88).  Every bf16
# cluster row of both ops timed at 64 K / 128 K / 256 K (M·N = 2^28), then ncu of the bulk t512 x16
# row of each at 256 K, one launch.  S31_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s31}
source .deps/env.sh 2>/dev/null
END=${S31_END:-560}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash bench/device_run.sh build-only > $OUT/build.log 2>&1   # builds, then names no stage
grep -E "prebuilt|build:" $OUT/build.log | head -3
timeout 200 build/kite-bench --variants --only '*_x*' --op layernorm,rmsnorm --n 65536,131072,262144 \
  > $OUT/clusters.txt 2>&1
echo "kite-bench rc=$? ($SECONDS s)"
awk '$4 ~ /^[0-9]+$/ && $5 != "*" && $5 != "=" { printf "%-10s %7s %-46s %7s %6s\n", $1, $4, $5, $6, $7 }' \
  $OUT/clusters.txt | sort -k1,1 -k2n -k5nr | awk '{ k = $1 " " $2; if (n[k]++ < 4) print }'
grep -E "^(layernorm|rmsnorm) .*[=]" $OUT/clusters.txt
for v in layernorm_bf16_bulk_t512_r1_n4_v16_c0_p2_x16 rmsnorm_bf16_bulk_t512_r1_n4_v16_c0_p2_x16; do
  [ $(( END - SECONDS )) -ge 60 ] || break
  op=${v%%_bf16*}
  timeout $(( END - SECONDS - 10 )) ncu --clock-control none --launch-skip 1 --launch-count 1 -k "regex:^${op}(_fwd)?$" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section SourceCounters \
    --metrics 'regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio' \
    build/kite-bench --op $op --n 262144 --warmup 0 --reps 1 --variants --only $v > $OUT/ncu.$v.txt 2>&1
  echo "== ncu $v rc=$? ($SECONDS s)"
  grep -E "Duration|DRAM Throughput|Registers Per|Grid Size|Block Size|Cluster Size|Warp Cycles Per Issued|Issued Warp|Achieved Occ|Executed Instructions  " $OUT/ncu.$v.txt | head -12
  grep -E "issue_stalled" $OUT/ncu.$v.txt | awk '{ print $NF, $1 }' | sort -rn | head -6
done
