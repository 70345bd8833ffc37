# Session 32, call 1, any GPU: two layernorm changes not yet run on a GPU, and the wide cluster rows.
#  - div_fast (session 31, 804b0497, back on main): layernorm's cluster rows divide by the reciprocal;
#  - wide cluster rows (rowops wide_ok): 256 threads of 8 accesses (layernorm, rmsnorm,
#    softmax, cross_entropy).
# s31_call5.sh: every layernorm cluster variant and the wide rmsnorm, softmax and cross_entropy ones
# by name, then the A/B of layernorm's bf16 cluster rows against the carried old kite-bench (7a6e2824:
# no div_fast, no wide rows); then the bf16 cluster rows of rmsnorm, softmax and cross_entropy timed
# twice (the wide ones beside the 512-thread ones), and ncu of the wide layernorm x16 row at 256 K
# (instructions issued against session 31 call 3's 512-thread row).
# S32_END (default 560 s) bounds it.
END=${S32_END:-560}
S31_BYNAME='layernorm_bf16_*_x* layernorm_f16_*_x* layernorm_f32_*_x* rmsnorm_*_n8_* softmax_*_n8_* cross_entropy_*_n8_*' S31_BYNAME_S=170 \
  S31_END=$(( END - 130 )) bash bench/lab/s31_call5.sh
source .deps/env.sh 2>/dev/null
[ -f $OUT/ncu.layernorm.262144.txt ] && mv $OUT/ncu.layernorm.262144.txt $OUT/ncu.n4_x16.txt
for r in 1 2; do
  [ $(( END - SECONDS )) -ge 50 ] || break
  timeout 80 build/kite-bench --variants --only '*_x*' --op rmsnorm,softmax,cross_entropy --n 32768,65536,131072,262144 > $OUT/rms.$r.txt 2>&1
done
# per op and N: the dispatched row, the best 512-thread row and the wide rows (first round)
awk '$4 ~ /^[0-9]+$/ && $5 != "*" { print $1, $4, $5, $6 }' $OUT/rms.1.txt | sort -k1,1 -k2n -k4n |
  awk '{ k = $1 " " $2 } $3 == "=" || $3 ~ /_n8_/ || (!(k in b) && $3 ~ /_t512_/) { if ($3 ~ /_t512_/) b[k] = 1; print }'
[ $(( END - SECONDS )) -ge 45 ] && KITE_NCU_OP=layernorm KITE_NCU_N=262144 \
  KITE_NCU_VARIANT=layernorm_bf16_reg_t256_r1_n8_v16_c0_p1_x16 KITE_CALL_S=$(( END - SECONDS - 5 )) bash bench/device_run.sh ncurow > $OUT/ncu_wide.log 2>&1
grep -E "Duration|Registers Per|Executed Ipc|Issue Slots|Memory Throughput|DRAM Throughput|Achieved Occ|Executed Instructions " $OUT/ncu.layernorm.262144.txt 2>/dev/null | head -12
cd $OUT && tar czf rms_ncu.tgz rms.?.txt ncu_wide.log 2>/dev/null; rm -f rms.?.txt ncu_wide.log
