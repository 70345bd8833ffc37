# Session 25, call 2, on the tree call 1 chose (t1024 rows, with or without the one-pass statistics):
# session 24's softmax / cross-entropy cluster rows by name (H100-only so far: the 1024-thread bulk rows,
# the f16 / f32 rows); on an H200 with 0 failures, layernorm retuned at every N and softmax / cross_entropy
# from 24 K, then the three against torch.compile.
export KITE_COMMIT=${KITE_COMMIT:-s25}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_BYNAME='softmax_*_bulk_t1024_*_x* cross_entropy_*_bulk_t1024_*_x* softmax_f16_*_x* softmax_f32_*_x* cross_entropy_f16_*_x* cross_entropy_f32_*_x*' \
  KITE_CALL_S=${S25_TEST_S:-100} bash bench/device_run.sh byname > $OUT/bn.log 2>&1
grep -E "build:|prebuilt" $OUT/bn.log; tail -2 $OUT/build.log; grep -A8 "tested by name" $OUT/bn.log
if echo "$G" | grep -q H200 && grep -q " 0 failures, 0 errors" $OUT/summary.txt; then
  KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 \
    KITE_CALL_S=${S25_TUNE_S:-130} bash bench/device_run.sh retune > $OUT/retune1.log 2>&1
  [ "${S25_TUNE2_S:-100}" -gt 0 ] && KITE_TUNE_KEEP_S=40 KITE_OPS=softmax,cross_entropy KITE_VS_OPS=softmax,cross_entropy \
    KITE_TUNE_FROM=24576 KITE_CALL_S=${S25_TUNE2_S:-100} bash bench/device_run.sh retune > $OUT/retune2.log 2>&1
  grep -E "^tune|table|vs_torch rc|^(softmax|cross_entropy|layernorm) " $OUT/summary.txt
else
  echo "no retune (not an H200, or a test failed)"
  # H100: ncu of the 1024-thread register cluster rows at 256 K against reg t512 x16 (issue-bound there)
  for v in layernorm_bf16_reg_t1024_r1_n4_v16_c0_p1_x8 layernorm_bf16_reg_t512_r1_n4_v16_c0_p1_x16; do
    KITE_NCU_OP=layernorm KITE_NCU_N=262144 KITE_NCU_VARIANT=$v bash bench/device_run.sh ncurow > $OUT/ncu.$v.log 2>&1
    echo "-- $v"; grep -vE "^(NVIDIA|build|prebuilt|[0-9a-f]{8} )" $OUT/ncu.$v.log | tail -22
  done
fi
# what torch.compile runs for rmsnorm / layernorm at 1 K and 16 K (where it beats kite): config and loop shape
left=$(( ${S25_END:-560} - SECONDS )); [ $left -gt 90 ] && left=90
[ $left -gt 20 ] && TORCH_LOGS=output_code timeout $left python3 bench/lab/s25_inductor.py > $OUT/inductor.txt 2> $OUT/inductor_code.log
echo "inductor rc=$? ($SECONDS s)"; grep -E "N=[0-9]+:" $OUT/inductor.txt | cut -c1-400
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
