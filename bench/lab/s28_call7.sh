# Session 28, call 7, any GPU: layernorm's resident rows with fewer instructions per element
# (bench/lab/s28_lnpatch.py levels 1-3 on the variants picked at 1 K / 16 K): ptxas, test_gpu
# by name (levels 2 and 3), ncu's executed instructions, time in rounds against the base, and
# vs torch.compile with the base's and level 2's libkite.so.
export KITE_COMMIT=${KITE_COMMIT:-s28}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
V1=layernorm_bf16_reg_t32_r8_n4_v16_c0_p1 V2=layernorm_bf16_reg_t256_r1_n4_v16_c0_p1_x2 V3=layernorm_bf16_reg_t512_r1_n4_v16_c0_p1
F="out/layernorm/$V1.cu out/layernorm/$V2.cu out/layernorm/$V3.cu"
D=/tmp/lp; mkdir -p $D; for f in $F; do cp $f $D/; done
restore() { for f in $F; do cp $D/$(basename $f) $f; done; }
KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1
grep -E "build:|prebuilt" $OUT/build_only.log | head -2
make -j16 build/libkite.so > /dev/null 2>&1; cp build/kite-bench $D/kb0; cp build/libkite.so $D/so0
for L in 1 2 3; do
  restore; python3 bench/lab/s28_lnpatch.py $L $F || exit 1
  make -j16 build/kite-bench build/libkite.so > $D/make$L.log 2>&1 || { echo "level $L: build failed"; grep -m5 error $D/make$L.log; continue; }
  for v in $V1 $V2 $V3; do echo "level $L $v: $(grep -h "registers\|spill" build/obj/layernorm/$v.o.log | tr -s ' ' | paste -sd' ' | grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' | paste -sd' ')"; done
  cp build/kite-bench $D/kb$L; cp build/libkite.so $D/so$L
  if [ $L -ge 2 ]; then
    KITE_CALL_S=200 KITE_BYNAME="$V1 $V2 $V3" bash bench/device_run.sh byname > $OUT/byname$L.log 2>&1
    echo "level $L by name: $(grep -E "checks,|tested by name" $OUT/byname$L.log | tail -2 | paste -sd' ')"
    cp $OUT/byname_tests.log $OUT/byname_tests$L.log 2>/dev/null
  fi
done
restore
M="--metrics smsp__inst_executed.sum,gpu__time_duration.sum"
for L in 0 1 2 3; do
  for vn in "$V1 1024" "$V2 16384" "$V3 16384"; do
    set -- $vn
    ncu --clock-control none -k regex:layernorm --launch-skip 1 --launch-count 1 $M $D/kb$L --op layernorm --n $2 \
      --variants --only $1 --warmup 0 --reps 1 2>&1 | grep -E "inst_executed|duration" | awk -v l=$L -v v=$1 '{print "ncu L" l, v, $1, $NF}'
  done
done | tee $OUT/inst.txt
for r in 1 2 3; do
  for L in 0 1 2 3; do
    for vn in "$V1 1024" "$V2 16384" "$V3 16384"; do
      set -- $vn
      $D/kb$L --op layernorm --n $2 --variants --only $1 --reps 100 | grep " $1 " | grep -v " = " | sed "s/^/L$L r$r /"
    done
  done
done > $OUT/lnpatch.txt
python3 - $OUT/lnpatch.txt <<'PY'
import sys, statistics as st, collections as co
t = co.defaultdict(list)
for l in open(sys.argv[1]):
    w = l.split()
    t[(w[7] if w[6] in "*=" else w[6], int(w[5]), w[0])].append(float(w[-4]))
for (v, n, L), x in sorted(t.items()):
    b = st.median(t[(v, n, "L0")])
    print(f"{v:44s} N={n:6d} {L} median {st.median(x):7.1f} us /L0 {st.median(x)/b:6.4f} runs {' '.join(f'{y:.1f}' for y in x)}")
PY
for L in 0 2; do
  cp $D/so$L build/libkite.so
  PYTHONUNBUFFERED=1 timeout 100 python3 bench/vs_torch.py --op layernorm --n 1024,16384 > $OUT/vs_torch_L$L.txt 2>&1
  echo "vs_torch L$L: rc=$? ($SECONDS s)"; grep -E "^layernorm +[0-9]" $OUT/vs_torch_L$L.txt
done
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
