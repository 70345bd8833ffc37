# Session 32, call 3, any GPU: the eight layernorm x16 variants that call 1's time limit cut (div_fast's
# x16 rows and the wide ones), by name, then s32_call2.sh (an H200: the retune; an H100: layernorm
# tuned per dtype at every N).  S32_END (default 560 s) bounds it.  It did not run in session 32 (no
# machine started); session 33 runs it on cede269f: div_fast in the x16 rows again, and the wide x16
# rows at three CTAs an SM with IEEE division (their list below is the same): all eight passed, and
# the three-CTA wide rows were slow.  Call 2 (S32_BYNAME: the three wide x16 rows, back at two CTAs an
# SM with div_fast, 30ccc7ce's PTX; S32_TESTED says which calls tested the objects) then the tune.
export KITE_COMMIT=${KITE_COMMIT:-s32}
END=${S32_END:-560}
v=; for d in bf16 f16; do v="$v layernorm_${d}_bulk_t512_r1_n4_v16_c0_p2_x16"; done
for d in bf16 f16 f32; do v="$v layernorm_${d}_reg_t256_r1_n8_v16_c0_p1_x16 layernorm_${d}_reg_t512_r1_n4_v16_c0_p1_x16"; done
v=${S32_BYNAME:-$v}   # session 33 call 2: the wide x16 rows alone (div_fast, two CTAs an SM again)
KITE_BYNAME="$v" KITE_CALL_S=$(( END < 270 ? END - 20 : 250 )) bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "prebuilt" $OUT/byname.log; grep -A10 "tested by name" $OUT/summary.txt
grep -E "layernorm.*(Failure|Error)" $OUT/byname_tests.log | head -5
if ! grep -q " 0 failures, 0 errors" $OUT/summary.txt || grep -q "^cut" $OUT/summary.txt; then
  echo "a test failed or was cut: no tune"; cd $OUT && tar czf logs3.tgz *.log; rm -f *.log; exit 0
fi
S32_TESTED=${S32_TESTED:-"session 32 calls 1 and 3"} S32_END=$(( END - SECONDS )) exec bash bench/lab/s32_call2.sh
