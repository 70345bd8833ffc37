# Session 32, call 1, any GPU: two layernorm changes not yet run on a GPU, and rmsnorm's wide rows.
#  - div_fast (session 31, 804b0497, back on main): layernorm's cluster rows divide by the reciprocal;
#  - wide cluster rows (rowops wide_ok): 256 threads of 8 accesses, layernorm and rmsnorm.
# s31_call5.sh: every layernorm cluster variant and the 12 wide rmsnorm ones by name, then the A/B of
# layernorm's bf16 cluster rows against the carried old kite-bench (7a6e2824: no div_fast, no wide
# rows); then rmsnorm's bf16 cluster rows timed twice (the wide ones beside the 512-thread ones), and
# ncu of the wide layernorm x16 row at 256 K (instructions issued against call 3's 512-thread row).
# S32_END (default 560 s) bounds it.
END=${S32_END:-560}
S31_BYNAME='layernorm_bf16_*_x* layernorm_f16_*_x* layernorm_f32_*_x* rmsnorm_*_n8_*' S31_BYNAME_S=150 \
  S31_END=$(( END - 110 )) bash bench/lab/s31_call5.sh
source .deps/env.sh 2>/dev/null
[ -f $OUT/ncu.layernorm.262144.txt ] && mv $OUT/ncu.layernorm.262144.txt $OUT/ncu.n4_x16.txt
for r in 1 2; do
  [ $(( END - SECONDS )) -ge 40 ] || break
  timeout 60 build/kite-bench --variants --only '*_x*' --op rmsnorm --n 32768,65536,131072,262144 > $OUT/rms.$r.txt 2>&1
done
cat $OUT/rms.?.txt | awk '$1 == "rmsnorm" && $4 ~ /^[0-9]+$/' | sort -k4n -k5 | head -80
[ $(( END - SECONDS )) -ge 45 ] && KITE_NCU_OP=layernorm KITE_NCU_N=262144 \
  KITE_NCU_VARIANT=layernorm_bf16_reg_t256_r1_n8_v16_c0_p1_x16 KITE_CALL_S=$(( END - SECONDS - 5 )) bash bench/device_run.sh ncurow > $OUT/ncu_wide.log 2>&1
grep -E "Duration|Registers Per|Executed Ipc|Issue Slots|Memory Throughput|DRAM Throughput|Achieved Occ|Executed Instructions " $OUT/ncu.layernorm.262144.txt 2>/dev/null | head -12
cd $OUT && tar czf rms_ncu.tgz rms.?.txt ncu_wide.log 2>/dev/null; rm -f rms.?.txt ncu_wide.log
