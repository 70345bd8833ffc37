# Session 28, call 8, H200 only (on an H100: nothing): rmsnorm (new template), layernorm and softmax
# against torch.compile at 1 K / 4 K / 16 K / 64 K: issue 2's and issue 5's checks.
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: nothing to do"; exit 0; }
KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1
grep -E "build:|prebuilt" $OUT/build_only.log | head -2
PYTHONUNBUFFERED=1 timeout 170 python3 bench/vs_torch.py --op rmsnorm,layernorm,softmax --n 1024,4096,16384,65536 \
  > $OUT/vs_torch.txt 2>&1
echo "vs_torch: rc=$? ($SECONDS s)"; grep -E "^(rmsnorm|layernorm|softmax) +[0-9]" $OUT/vs_torch.txt
