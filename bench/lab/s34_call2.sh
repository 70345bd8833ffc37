# Session 34, call 2, whichever GPU comes.  H200: the retune (s32_call2.sh's H200 branch, i.e.
# s29_call1.sh --retune-only) on objects that call 1 tested by name on an H100; copy h200*.tsv from
# $OUT to bench/tuned/, make gen.  H100: layernorm (bf16, then f16) against torch.compile on the
# table call 1 retuned (2d237504), at the N.  S34_END (default 520 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s34}
source .deps/env.sh 2>/dev/null
END=${S34_END:-520}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  S32_TESTED="session 34 call 1 (an H100)" S32_END=$END exec bash bench/lab/s32_call2.sh
fi
bash bench/device_run.sh build > $OUT/build.log 2>&1
echo "build rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/build.log
for d in bf16 f16; do
  t=$(( END - SECONDS - 10 )); [ $d = bf16 ] && t=$(( t / 2 + 20 ))
  PYTHONUNBUFFERED=1 timeout $t python3 bench/vs_torch.py --op layernorm --dtype $d \
    --n 1024,4096,16384,65536,131072,262144 > $OUT/vs_ln_$d.txt 2>&1
  echo "vs_torch layernorm $d: rc=$? ($SECONDS s)"; grep -E "^layernorm|^op|N " $OUT/vs_ln_$d.txt | head -10
done
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
