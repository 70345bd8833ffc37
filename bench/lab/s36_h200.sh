# Session 36's last ~300 s of device time, used only if an H200 comes (none since session 23): the
# merged kernels (9b8043e1) with the H200 set of session 23, against torch.compile in the same
# process (vs_torch.py: rmsnorm and layernorm at 1 K / 16 K / 256 K), then the bf16 layernorm
# variants by name in the time left.  On an H100 it exits after nvidia-smi.
# Carry [".deps", ".prebuilt"].
export KITE_COMMIT=${KITE_COMMIT:-s36}
source .deps/env.sh 2>/dev/null
END=${S36_END:-150}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || exit 0
bash bench/device_run.sh build > $OUT/build.log 2>&1; echo "build rc=$? ($SECONDS s)"
PYTHONUNBUFFERED=1 timeout $(( END - SECONDS - 40 )) python3 bench/vs_torch.py --op rmsnorm,layernorm --n 1024,16384,262144 \
  > $OUT/vs_torch.txt 2>&1
echo "vs_torch rc=$? ($SECONDS s)"; grep -E "^(rmsnorm|layernorm) " $OUT/vs_torch.txt
[ $(( END - SECONDS )) -gt 25 ] && KITE_BYNAME='layernorm_bf16_*' KITE_CALL_S=$(( END - SECONDS - 5 )) \
  bash bench/device_run.sh byname > $OUT/byname.log 2>&1 && grep -A2 "tested by name" $OUT/summary.txt
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
