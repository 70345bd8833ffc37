# Session 22, call 3 (`bash bench/lab/s22_call3.sh` from the repo root, main's kernels): on an H200 the
# ops not retuned since their cluster rows changed (session 17), from N = 24 K, then every op against
# torch.compile; on an H100 ncu of layernorm's cluster rows beside rmsnorm's (why half the DRAM rate?).
export KITE_COMMIT=${KITE_COMMIT:-f0bfa3b8}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  KITE_TUNE_KEEP_S=220 KITE_OPS=softmax,cross_entropy,rmsnorm,softmax_bwd,rmsnorm_bwd KITE_TUNE_FROM=24576 KITE_CALL_S=575 \
    bash bench/device_run.sh retune > $OUT/retune.log 2>&1; grep -E "build:|prebuilt" $OUT/retune.log; cat $OUT/summary.txt
else
  export PATH=$PATH:/usr/local/cuda/bin
  KITE_BYNAME=none KITE_CALL_S=1 bash bench/device_run.sh byname > $OUT/build.log 2>&1; grep -E "build:|prebuilt" $OUT/build.log
  for ov in rmsnorm:reg_t512_r1_n4_v16_c0_p1_x16 layernorm:reg_t512_r1_n4_v16_c0_p1_x16 layernorm:reg_t256_r1_n4_v16_c0_p1_x16 \
            layernorm_bwd:reg_t512_r1_n4_v16_c0_p1_x16 rmsnorm_bwd:reg_t512_r1_n4_v16_c0_p1_x16; do
    op=${ov%%:*} v=${ov#*:}
    timeout 60 ncu --clock-control none --launch-count 1 --kernel-name-base mangled -k "regex:${op}_bf16_${v}_cu" \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
      --section InstructionStats --metrics 'smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio' \
      build/kite-bench --op $op --n 262144 --variants --warmup 0 --reps 1 > $OUT/ncu.$op.$v.txt 2>&1
    echo "== $op $v rc=$?"
    grep -E "^    (Duration|DRAM Throughput|Registers Per|Grid Size|Issued Warp Per|Warp Cycles Per Issued|Theoretical Occ)|inst_executed.sum" \
      $OUT/ncu.$op.$v.txt | awk '{print $1,$2,$3,$NF}' | tr '\n' ';'; echo
    grep issue_stalled $OUT/ncu.$op.$v.txt | awk '{ print $NF, $1 }' | sort -rn | head -5 \
      | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | tr '\n' ';'; echo
  done
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
