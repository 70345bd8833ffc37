# Session 28, call 3, whichever GPU comes:
#  H200: s27_call1.sh's H200 branch (the retune; see s28_call2.sh).
#  H100: SASS of rmsnorm's row variants at 1 K / 16 K and of torch.compile's Triton kernels there
#        (ncu in call 2: kite issues 2.7x / 1.6x the warp instructions of Triton at 1 K / 16 K), and
#        ncu's executed-instruction counts of each, for an instruction budget per element.
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  bash bench/lab/s27_call1.sh
  exit 0
fi
KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1
grep -E "build:|prebuilt" $OUT/build_only.log | head -2
mkdir -p $OUT/sass
for v in reg_t32_r8_n4 reg_t64_r4_n2 reg_t512_r1_n4; do
  cuobjdump -sass build/obj/rmsnorm/rmsnorm_bf16_${v}_v16_c0_p1.o > $OUT/sass/kite_$v.sass 2>&1
  echo "kite $v: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' $OUT/sass/kite_$v.sass) SASS lines"
done
export TRITON_CACHE_DIR=/tmp/tcache
M="--metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum,dram__bytes.sum,gpu__time_duration.sum"
for n in 1024 16384; do
  timeout 120 ncu --clock-control none --profile-from-start off -k "regex:triton" $M \
    python3 bench/lab/s28_ncu_compile.py $n > $OUT/inst.compile.$n.txt 2>&1
  echo "== compile $n rc=$?"; grep -E "triton_|inst_executed|dram__bytes|duration" $OUT/inst.compile.$n.txt | head -6
  timeout 60 ncu --clock-control none -k "regex:^rmsnorm" $M --launch-count 1 \
    build/kite-bench --op rmsnorm --n $n --warmup 0 --reps 1 > $OUT/inst.kite.$n.txt 2>&1
  echo "== kite $n rc=$?"; grep -E "rmsnorm|inst_executed|dram__bytes|duration" $OUT/inst.kite.$n.txt | grep -v "^rmsnorm " | head -6
done
for f in $(find /tmp/tcache -name '*.cubin' 2>/dev/null); do
  b=$(basename $f .cubin); cuobjdump -sass $f > $OUT/sass/triton_$b.sass 2>&1 || nvdisasm $f > $OUT/sass/triton_$b.sass 2>&1
  echo "triton $b: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' $OUT/sass/triton_$b.sass) SASS lines"
done
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
