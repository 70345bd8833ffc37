# Session 28, call 1, whichever GPU comes:
#  H200: s27_call1.sh's H200 branch (session 25's retune of layernorm at every N with the t1024
#        cluster rows, softmax / cross_entropy from 24 K, vs torch.compile; softmax_bwd from 4 K).
#        Copy h200.tsv / h200.times.tsv from $OUT to bench/tuned/, make gen, commit.
#  H100: rmsnorm 1 K / 16 K with cache hints on the row loads and stores (s28_ldhint.sh, ~150 s),
#        then kite_gemm's dispatch through the H100 set (picked by the device name) and through the
#        H200 set (KITE_GPU=h200), the same 30 shapes (the default seed), one warm machine.
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  bash bench/lab/s27_call1.sh
  exit 0
fi
KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1   # the build alone
grep -E "build:|prebuilt" $OUT/build_only.log | head -2
timeout 240 bash bench/lab/s28_ldhint.sh; echo "ldhint rc=$? ($SECONDS s)"
share=$(( (500 - SECONDS) / 2 ))
for set in h100 h200; do
  if [ $set = h100 ]; then e=; else e="KITE_GPU=h200"; fi
  env $e timeout $share build/kite-bench gemm --check-dispatch > $OUT/gemm_$set.txt 2>&1
  echo "gemm check-dispatch, set $set: rc=$? ($SECONDS s)"
  grep -E "^# dispatch|^check-dispatch" $OUT/gemm_$set.txt
done
{ make -j16 build/test_gpu && CK_RUN_CASE=launch timeout 60 build/test_gpu; } > $OUT/set.log 2>&1
grep -E "measured set|passed|failed|Error" $OUT/set.log | head -4
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
