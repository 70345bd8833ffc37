# Session 31 (written in session 30), call 1, whichever GPU comes; S31_END (default 560, seconds from
# the start) bounds it: give the call's limit ~40 s more.  Most valuable part first.
#  1. Every layernorm variant by name: 2e7e57c0 changed their lane sums' order (lane_fold); they
#     passed on an H100 (session 30), not yet on an H200.
#     Other GPUs then: ncu of layernorm 16 K, kite's dispatched row (the H100 set: reg t512 n4) and
#     torch.compile's kernel (NOTES Next (session 29) 3), if 150 s are left.
#  2. H200: s29_call1.sh --retune-only (layernorm at every N, rmsnorm against torch.compile, softmax /
#     cross_entropy from 24 K, softmax_bwd from 4 K).  Copy h200*.tsv from $OUT to bench/tuned/,
#     make gen, commit, RESULTS, README's speed paragraph.
export KITE_COMMIT=${KITE_COMMIT:-s31}
source .deps/env.sh 2>/dev/null
END=${S31_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME='layernorm_bf16_* layernorm_f16_* layernorm_f32_*' KITE_CALL_S=170 bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "prebuilt" $OUT/byname.log; grep -A4 "tested by name" $OUT/summary.txt
if ! grep -q " 0 failures, 0 errors" $OUT/summary.txt; then echo "a test failed: stop"; exit 0; fi
if echo "$G" | grep -q H200; then
  S29_END=$(( END - SECONDS )) exec bash bench/lab/s29_call1.sh --retune-only   # it packs the logs
fi
if [ $(( END - SECONDS )) -ge 150 ]; then
  KITE_NCU_OP=layernorm KITE_NCU_N=16384 KITE_CALL_S=90 bash bench/device_run.sh ncurow
  timeout 50 ncu --clock-control none --profile-from-start off -k "regex:triton" --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section LaunchStats \
    --metrics 'regex:smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio' \
    python3 bench/lab/s29_ncu_compile.py layernorm 16384 > $OUT/ncu.compile.layernorm.16384.txt 2>&1
  echo "== torch.compile layernorm 16384: rc=$? ($SECONDS s)"
  grep -E "^  triton|Duration|Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Issued" \
    $OUT/ncu.compile.layernorm.16384.txt | head -16
  grep -E "issue_stalled" $OUT/ncu.compile.layernorm.16384.txt | awk '{ print $NF, $1 }' | sort -rn | head -6
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
