# Session 28, call 6, H200 only (on an H100: nothing): rmsnorm, layernorm and softmax against
# torch.compile at 1 K / 4 K / 16 K / 64 K with rmsnorm's new template (issue 2's check), then
# layernorm retuned at every N (s27_call5.sh) in the time left; copy h200*.tsv back, make gen.
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: nothing to do"; exit 0; }
KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1
grep -E "build:|prebuilt" $OUT/build_only.log | head -2
PYTHONUNBUFFERED=1 timeout 150 python3 bench/vs_torch.py --op rmsnorm,layernorm,softmax --n 1024,4096,16384,65536 \
  > $OUT/vs_torch.txt 2>&1
echo "vs_torch: rc=$? ($SECONDS s)"; grep -E "^(rmsnorm|layernorm|softmax) +[0-9]" $OUT/vs_torch.txt
left=$(( 440 - SECONDS ))
[ $left -gt 150 ] && S27_CALL_S=$left bash bench/lab/s27_call5.sh
