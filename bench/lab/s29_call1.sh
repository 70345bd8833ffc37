# Session 29, call 1, whichever GPU comes: the three layernorm cluster variants not yet run with
# load_whole (NOTES Next (session 29) 0); on an H100 then ncu of layernorm at 16 K, on an H200
# torch.compile and the retune (below); `--retune-only`: the H200 part alone.
export KITE_COMMIT=${KITE_COMMIT:-s29}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if [ "${1:-}" != --retune-only ]; then
  KITE_BYNAME="layernorm_bf16_reg_t1024_r1_n4_v16_c0_p1_x8 layernorm_bf16_reg_t512_r1_n4_v16_c0_p1_x16 layernorm_f16_reg_t512_r1_n4_v16_c0_p1_x16" \
    bash bench/device_run.sh byname > $OUT/byname.log 2>&1
  echo "byname rc=$? ($SECONDS s)"
  grep -E "build:|prebuilt" $OUT/byname.log | head -2; grep -E "[0-9]+%: Checks|passed|failed|Error" $OUT/byname.log | tail -4
  if ! echo "$G" | grep -q H200; then
    # H100: layernorm 16 K, where torch.compile stays ahead (0.94x): one-row CTAs not persistent
    # (s29_lnpers.sh), then ncu of kite's two best rows and of compile's Triton kernel, stall reasons
    # per issued instruction (NOTES Next (session 29) 3)
    bash bench/lab/s29_lnpers.sh; echo "lnpers done ($SECONDS s)"
    [ $SECONDS -gt $(( ${S29_END:-565} - 145 )) ] && { cd $OUT && tar czf logs.tgz *.log; rm -f *.log; exit 0; }
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
fi
# H200: session 27's retune (s27_call1.sh's H200 branch, with these three tests in place of session
# 24's cluster rows, tested on H100s in session 26): layernorm at every N, softmax / cross_entropy from
# 24 K, each then against torch.compile; rmsnorm against torch.compile (issue 2's 1-2% at 1 K / 16 K);
# softmax_bwd from 4 K in the time left.  Copy h200*.tsv from $OUT to bench/tuned/, make gen, commit.
# S29_TESTED: the call that tested these objects by name instead (a retune-only call)
if [ -z "${S29_TESTED:-}" ] && ! grep -q " 0 failures, 0 errors" $OUT/summary.txt; then echo "a test failed: no retune"; exit 0; fi
END=${S29_END:-565}
KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 KITE_CALL_S=130 \
  bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
if [ $(( END - SECONDS )) -ge 70 ]; then
  PYTHONUNBUFFERED=1 timeout 70 python3 bench/vs_torch.py --op rmsnorm --n 1024,4096,16384,65536 > $OUT/vs_torch_rms.txt 2>&1
  echo "vs_torch rmsnorm: rc=$? ($SECONDS s)"
fi
[ $(( END - SECONDS )) -ge 100 ] && KITE_TUNE_KEEP_S=40 KITE_OPS=softmax,cross_entropy KITE_VS_OPS=softmax,cross_entropy \
  KITE_TUNE_FROM=24576 KITE_CALL_S=100 bash bench/device_run.sh retune > $OUT/retune2.log 2>&1
left=$(( END - SECONDS ))
[ $left -gt 60 ] && KITE_TUNE_KEEP_S=20 KITE_OPS=softmax_bwd KITE_VS_OPS=softmax_bwd KITE_TUNE_FROM=4096 \
  KITE_CALL_S=$left bash bench/device_run.sh retune > $OUT/retune3.log 2>&1
grep -E "^tune|table|vs_torch rc|^(softmax|cross_entropy|layernorm|softmax_bwd) +[0-9]" $OUT/summary.txt | head -60
grep -E "^rmsnorm +[0-9]" $OUT/vs_torch_rms.txt 2>/dev/null
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
