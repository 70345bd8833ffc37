# Session 28: issue 2's 1-2% at rmsnorm 1 K / 16 K. Do cache hints on the row loads and stores
# help? The three variants dispatch picks there (H200 set: reg t32 r8 n4 at 1 K, reg t512 r1 n4
# at 16 K; H100 set: reg t64 r4 n2 at 1 K) are rebuilt with ld_stream / store_floats changed:
#   A  loads ld.global.nc.L1::no_allocate.L2::256B (no L1 line, 256-byte L2 prefetch)
#   B  loads ld.global.cs, stores st.global.cs (streaming: evict first)
#   C  loads ld.global.nc.L1::no_allocate.L2::cache_hint with an evict_first policy
# then each binary times rmsnorm at 1 K and 16 K (M*N = 2^28), in rounds, base first each round.
# Run after a build (build/kite-bench current); restores out/ at the end.
source .deps/env.sh 2>/dev/null
F="out/rmsnorm/rmsnorm_bf16_reg_t32_r8_n4_v16_c0_p1.cu out/rmsnorm/rmsnorm_bf16_reg_t512_r1_n4_v16_c0_p1.cu
   out/rmsnorm/rmsnorm_bf16_reg_t64_r4_n2_v16_c0_p1.cu"
LD='    const uint4 v = __ldg(reinterpret_cast<const uint4 \*>(p));'
ST='    \*reinterpret_cast<raw_t \*>(row + i) = r;'
A='    uint4 v; asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));'
B='    const uint4 v = __ldcs(reinterpret_cast<const uint4 *>(p));'
BS='    __stcs(reinterpret_cast<uint4 *>(row + i), *reinterpret_cast<const uint4 *>(\&r));'
C='    uint4 v; asm volatile("{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0; ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], pol; }" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));'
D=/tmp/ldhint; mkdir -p $D; for f in $F; do cp $f $D/; done
make -j16 build/kite-bench > $D/make0.log 2>&1 || { echo "base build failed"; tail $D/make0.log; exit 1; }
cp build/kite-bench $D/kb_base
for m in A B C; do
  for f in $F; do
    cp $D/$(basename $f) $f
    case $m in
      A) sed -i "s|^$LD\$|$A|" $f ;;
      B) sed -i -e "s|^$LD\$|$B|" -e "s|^$ST\$|$BS|" $f ;;
      C) sed -i "s|^$LD\$|$C|" $f ;;
    esac
    grep -c "__ldg(reinterpret_cast<const uint4" $f | grep -q '^0$' || echo "$m: $f not changed"
  done
  make -j16 build/kite-bench > $D/make$m.log 2>&1 || { echo "build $m failed"; grep -m3 error $D/make$m.log; continue; }
  cp build/kite-bench $D/kb_$m
done
for f in $F; do cp $D/$(basename $f) $f; done
for r in 1 2 3; do
  for m in base A B C; do
    [ -x $D/kb_$m ] || continue
    $D/kb_$m --op rmsnorm --n 1024,16384 --reps 100 | grep "^rmsnorm" | sed "s/^/$m r$r /"
  done
done > $OUT/ldhint.txt
echo "ldhint: median time_us per N over rounds (lower is better)"
python3 - $OUT/ldhint.txt <<'PY'
import sys, statistics as st, collections as co
t = co.defaultdict(list)
for l in open(sys.argv[1]):
    w = l.split()
    t[(w[0], int(w[5]))].append(float(w[-4]))
for (m, n), v in sorted(t.items(), key=lambda x: (x[0][1], x[0][0])):
    b = st.median(t[("base", n)])
    print(f"{m:5s} N={n:6d} median {st.median(v):8.1f} us  /base {st.median(v)/b:6.4f}  runs {' '.join(f'{x:.1f}' for x in v)}")
PY
