# Session 28, call 5 (rmsnorm's template: whole chunks, no w_offset add at 0, __fdividef), any GPU:
# every rmsnorm forward variant tested by name (test_gpu's variants case: odd sizes, poisoned
# outputs), test_norm's res_entry (w_offset 1 through the dispatch), then rmsnorm against
# torch.compile at 1 K / 4 K / 16 K / 64 K in two runs.  On an H200 also layernorm and softmax.
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_CALL_S=300 KITE_BYNAME="rmsnorm_bf16_* rmsnorm_f16_* rmsnorm_f32_*" bash bench/device_run.sh byname > $OUT/byname.log 2>&1
grep -E "build:|prebuilt|tested by name|checks,|processes done" $OUT/byname.log | head -6
{ make -j16 build/test_norm && CK_RUN_CASE=res_entry timeout 90 build/test_norm; } > $OUT/res_entry.log 2>&1
echo "res_entry: $(grep -E "Checks" $OUT/res_entry.log | tail -1) ($SECONDS s)"
ops=rmsnorm; echo "$G" | grep -q H200 && ops=rmsnorm,layernorm,softmax
for r in 1 2; do
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/vs_torch.py --op $ops --n 1024,4096,16384,65536 > $OUT/vs_torch$r.txt 2>&1
  echo "vs_torch run $r: rc=$? ($SECONDS s)"; grep -E "^(rmsnorm|layernorm|softmax) +[0-9]" $OUT/vs_torch$r.txt
done
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
