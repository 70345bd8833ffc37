# Session 29, call 1, whichever GPU comes: the three layernorm cluster variants not yet run with
# load_whole (NOTES Next (session 29) 0), then on an H200 only rmsnorm / layernorm / softmax against
# torch.compile (s28_call8.sh's check: does rmsnorm's instruction cut close issue 2's 1-2%?).
export KITE_COMMIT=${KITE_COMMIT:-s29}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME="layernorm_bf16_reg_t1024_r1_n4_v16_c0_p1_x8 layernorm_bf16_reg_t512_r1_n4_v16_c0_p1_x16 layernorm_f16_reg_t512_r1_n4_v16_c0_p1_x16" \
  bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"
grep -E "build:|prebuilt" $OUT/byname.log | head -2; grep -E "[0-9]+%: Checks|passed|failed|Error" $OUT/byname.log | tail -4
if ! echo "$G" | grep -q H200; then
  # H100: layernorm 16 K, where torch.compile stays ahead (0.94x): ncu of kite's two best rows and of
  # compile's Triton kernel, stall reasons per issued instruction (NOTES Next (session 29) 3)
  for v in layernorm_bf16_reg_t256_r1_n4_v16_c0_p1_x2 layernorm_bf16_reg_t512_r1_n4_v16_c0_p1; do
    echo "== $v"
    KITE_NCU_OP=layernorm KITE_NCU_N=16384 KITE_NCU_VARIANT=$v KITE_CALL_S=400 bash bench/device_run.sh ncurow
    mv $OUT/ncu.layernorm.16384.txt $OUT/ncu.$v.txt
  done
  SECT="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
  timeout 150 ncu --clock-control none --profile-from-start off -k "regex:triton" $SECT \
    --metrics 'regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio' \
    python3 bench/lab/s29_ncu_compile.py layernorm 16384 > $OUT/ncu.compile.layernorm.16384.txt 2>&1
  echo "== torch.compile layernorm 16384: rc=$? ($SECONDS s)"
  grep -E "^  triton|Duration|Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Warp Cycles|Eligible|Issued" \
    $OUT/ncu.compile.layernorm.16384.txt | head -30
  grep -E "issue_stalled" $OUT/ncu.compile.layernorm.16384.txt | awk '{ print $NF, $1 }' | sort -rn | head -8
  cd $OUT && tar czf logs.tgz *.log; rm -f *.log; exit 0
fi
PYTHONUNBUFFERED=1 timeout 200 python3 bench/vs_torch.py --op rmsnorm,layernorm,softmax --n 1024,4096,16384,65536 \
  > $OUT/vs_torch.txt 2>&1
echo "vs_torch: rc=$? ($SECONDS s)"; grep -E "^(rmsnorm|layernorm|softmax) +[0-9]" $OUT/vs_torch.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
