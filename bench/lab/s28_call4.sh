# Session 28, call 4, whichever GPU comes:
#  H200: s27_call1.sh's H200 branch (the retune; see s28_call2.sh).
#  H100: rmsnorm's resident rows with fewer instructions per element (bench/lab/s28_rowpatch.py
#        levels 1-3 on the variants picked at 1 K / 16 K): each level's binary checked (test_gpu by
#        name, level 3), its executed instructions (ncu) and its time, in rounds against the base.
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  bash bench/lab/s27_call1.sh
  exit 0
fi
V1=rmsnorm_bf16_reg_t32_r8_n4_v16_c0_p1 V2=rmsnorm_bf16_reg_t64_r4_n2_v16_c0_p1 V3=rmsnorm_bf16_reg_t512_r1_n4_v16_c0_p1
F="out/rmsnorm/$V1.cu out/rmsnorm/$V2.cu out/rmsnorm/$V3.cu"
D=/tmp/rp; mkdir -p $D; for f in $F; do cp $f $D/; done
restore() { for f in $F; do cp $D/$(basename $f) $f; done; }
KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1
grep -E "build:|prebuilt" $OUT/build_only.log | head -2
cp build/kite-bench $D/kb0
for L in 1 2 3; do
  restore; python3 bench/lab/s28_rowpatch.py $L $F || exit 1
  make -j16 build/kite-bench > $D/make$L.log 2>&1 || { echo "level $L: build failed"; grep -m5 error $D/make$L.log; continue; }
  grep -h "registers\|spill" build/obj/rmsnorm/$V1.o.log build/obj/rmsnorm/$V2.o.log build/obj/rmsnorm/$V3.o.log | \
    tr -s ' ' | paste -sd' ' | sed "s/^/level $L ptxas: /" | cut -c1-300
  cp build/kite-bench $D/kb$L
done
# level 3 is in out/ now: test_gpu by name on the three variants (odd sizes, poisoned outputs)
KITE_BYNAME="$V1 $V2 $V3" bash bench/device_run.sh byname > $OUT/byname3.log 2>&1
grep -E "passed|failed|FAIL|Error" $OUT/byname3.log | tail -4
# w_offset 1 (Gemma) goes through kite_rmsnorm_fwd_residual with no residual: test_norm's res_entry
{ make -j16 build/test_norm && CK_RUN_CASE=res_entry timeout 90 build/test_norm; } > $OUT/res_entry3.log 2>&1
echo "res_entry (level 3): $(grep -E "Checks|passed" $OUT/res_entry3.log | tail -2 | paste -sd' ')"
restore
M="--metrics smsp__inst_executed.sum,gpu__time_duration.sum"
for L in 0 1 2 3; do
  for vn in "$V1 1024" "$V2 1024" "$V3 16384"; do
    set -- $vn
    ncu --clock-control none -k regex:rmsnorm --launch-skip 1 --launch-count 1 $M $D/kb$L --op rmsnorm --n $2 \
      --variants --only $1 --warmup 0 --reps 1 2>&1 | grep -E "inst_executed|duration" | awk -v l=$L -v v=$1 '{print "ncu L" l, v, $1, $NF}'
  done
done | tee $OUT/inst.txt
for r in 1 2 3; do
  for L in 0 1 2 3; do
    for vn in "$V1 1024" "$V2 1024" "$V3 16384"; do
      set -- $vn
      $D/kb$L --op rmsnorm --n $2 --variants --only $1 --reps 100 | grep " $1 " | grep -v " = " | sed "s/^/L$L r$r /"
    done
  done
done > $OUT/rowpatch.txt
python3 - $OUT/rowpatch.txt <<'PY'
import sys, statistics as st, collections as co
t = co.defaultdict(list)
for l in open(sys.argv[1]):
    w = l.split()
    t[(w[7] if w[6] in "*=" else w[6], int(w[5]), w[0])].append(float(w[-4]))
for (v, n, L), x in sorted(t.items()):
    b = st.median(t[(v, n, "L0")])
    print(f"{v:40s} N={n:6d} {L} median {st.median(x):7.1f} us /L0 {st.median(x)/b:6.4f} runs {' '.join(f'{y:.1f}' for y in x)}")
PY
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
