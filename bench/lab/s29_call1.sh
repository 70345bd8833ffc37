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
echo "$G" | grep -q H200 || { echo "not an H200: stop here"; cd $OUT && tar czf logs.tgz *.log; rm -f *.log; exit 0; }
PYTHONUNBUFFERED=1 timeout 200 python3 bench/vs_torch.py --op rmsnorm,layernorm,softmax --n 1024,4096,16384,65536 \
  > $OUT/vs_torch.txt 2>&1
echo "vs_torch: rc=$? ($SECONDS s)"; grep -E "^(rmsnorm|layernorm|softmax) +[0-9]" $OUT/vs_torch.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
