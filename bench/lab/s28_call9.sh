# Session 28, call 9, any GPU: layernorm's resident rows with load_whole (the library's, 2nd commit
# after 9505a93a): every layernorm forward register variant tested by name (test_norm's variants case:
# odd sizes, poisoned outputs), two rmsnorm ones after the move, then layernorm against
# torch.compile at 1 K / 16 K if time is left.
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_CALL_S=130 KITE_BYNAME="layernorm_*_reg_* rmsnorm_bf16_reg_t32_r8_n4_v16_c0_p1 rmsnorm_bf16_reg_t512_r1_n4_v16_c0_p1" \
  bash bench/device_run.sh byname > $OUT/byname.log 2>&1
grep -E "build:|prebuilt|tested by name|checks,|processes done" $OUT/byname.log | head -6
if [ $SECONDS -lt 120 ]; then
  PYTHONUNBUFFERED=1 timeout 60 python3 bench/vs_torch.py --op layernorm --n 1024,16384 > $OUT/vs_torch.txt 2>&1
  echo "vs_torch: rc=$? ($SECONDS s)"; grep -E "^layernorm +[0-9]" $OUT/vs_torch.txt
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
