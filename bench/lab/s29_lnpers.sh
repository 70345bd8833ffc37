# Session 29, any GPU: layernorm's one-row CTAs are persistent (sms x CTAs an SM, w and b copied once
# per CTA), rmsnorm's are not (one CTA a row, w from L2 per row); at 16 K session 24's ncu had layernorm
# 373 us / 84% of copy, rmsnorm 352 us / 89% (RESULTS 24). Here: the same layernorm variants with
# kPersistent = false in the generated files (one CTA, or cluster, per row: w and b read per row,
# the grid's tail balanced by the hardware), against the tree as sent, three rounds each, by name.
# Then the patched ones tested by name.  Usage: bash bench/lab/s29_lnpers.sh (after a build)
source .deps/env.sh 2>/dev/null
VN="layernorm_bf16_reg_t512_r1_n4_v16_c0_p1:16384 layernorm_bf16_reg_t1024_r1_n2_v16_c0_p1:16384
    layernorm_bf16_reg_t256_r1_n4_v16_c0_p1_x2:16384 layernorm_bf16_reg_t256_r1_n4_v16_c0_p1:8192
    layernorm_bf16_reg_t128_r1_n4_v16_c0_p1:4096"
D=/tmp/lpers; mkdir -p $D
make -j16 build/kite-bench > /dev/null 2>&1; cp build/kite-bench $D/kb0
F=; for vn in $VN; do F="$F out/layernorm/${vn%%:*}.cu"; done
for f in $F; do cp $f $D/; sed -i 's/^constexpr bool kPersistent = .*;/constexpr bool kPersistent = false;   \/\/ s29 lab/' $f; done
grep -c "s29 lab" $F | paste -sd' '
make -j16 build/kite-bench build/libkite.so > $D/make1.log 2>&1 || { echo "patched build failed"; grep -m5 error $D/make1.log; }
cp build/kite-bench $D/kb1
for vn in $VN; do v=${vn%%:*}; echo "$v: $(grep -hoE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' build/obj/layernorm/$v.o.log | paste -sd' ')"; done
for r in 1 2 3; do
  for L in 0 1; do
    for vn in $VN; do
      $D/kb$L --op layernorm --n ${vn##*:} --variants --only ${vn%%:*} --reps 100 | grep " ${vn%%:*} " | grep -v " = " | sed "s/^/L$L r$r /"
    done
  done
done > $OUT/lnpers.txt
python3 - $OUT/lnpers.txt <<'PY'
import sys, statistics as st, collections as co
t = co.defaultdict(list)
for l in open(sys.argv[1]):
    w = l.split()
    t[(w[7] if w[6] in "*=" else w[6], int(w[5]), w[0])].append(float(w[-4]))
for (v, n, L), x in sorted(t.items()):
    b = st.median(t[(v, n, "L0")])
    print(f"{v:44s} N={n:6d} {L} median {st.median(x):7.1f} us /L0 {st.median(x)/b:6.4f} runs {' '.join(f'{y:.1f}' for y in x)}")
PY
KITE_CALL_S=${S29_BN_S:-150} KITE_BYNAME="$(for vn in $VN; do printf '%s ' ${vn%%:*}; done)" bash bench/device_run.sh byname > $OUT/lnpers_bn.log 2>&1
echo "patched, by name: $(grep -E "checks,|processes done" $OUT/lnpers_bn.log | tail -2 | paste -sd' ')"
for f in $F; do cp $D/$(basename $f) $f; done
