# Session 28, call 2, whichever GPU comes:
#  H200: s27_call1.sh's H200 branch (session 25's retune: layernorm at every N with the t1024 cluster
#        rows, softmax / cross_entropy from 24 K, vs torch.compile; softmax_bwd from 4 K).
#        Copy h200.tsv / h200.times.tsv from $OUT to bench/tuned/, make gen, commit.
#  H100: ncu of rmsnorm at 1 K and 16 K (bf16, M*N = 2^28): kite's dispatched variant and
#        torch.compile's kernel, the same sections (issue 2's 1-2% there).
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  bash bench/lab/s27_call1.sh
  exit 0
fi
SECT="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats
  --section Occupancy --section LaunchStats"
KEYS="Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Grid Size|Block Size|Waves Per SM|Eligible|Issued Warp|No Eligible|L2 Hit Rate|Mem Busy|Max Bandwidth"
KITE_NCU_OP=rmsnorm KITE_NCU_N=16384 KITE_CALL_S=200 bash bench/device_run.sh ncurow > $OUT/ncu_kite16k.log 2>&1
KITE_NCU_OP=rmsnorm KITE_NCU_N=1024 KITE_CALL_S=200 bash bench/device_run.sh ncurow > $OUT/ncu_kite1k.log 2>&1
for n in 16384 1024; do
  echo "== kite rmsnorm $n"; grep -E "$KEYS" $OUT/ncu.rmsnorm.$n.txt | head -24
  timeout 150 ncu --clock-control none --profile-from-start off -k "regex:triton" $SECT \
    python3 bench/lab/s28_ncu_compile.py $n > $OUT/ncu.compile.$n.txt 2>&1
  echo "== torch.compile rmsnorm $n: rc=$? ($SECONDS s)"; grep -E "^  triton|$KEYS" $OUT/ncu.compile.$n.txt | head -26
done
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
