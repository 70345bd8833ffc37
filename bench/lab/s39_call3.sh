# Session 39, call 3, whichever GPU comes (carry [".deps", ".prebuilt"]), with little device time left:
# test_norm split over processes (device_run.sh norm: the out/include form's test_norm half, 429
# variants, which call 1's check left out), then test_tune; on an H200 the retune
# (s29_call1.sh --retune-only) in what is left of S39_END (default 400 s).
export KITE_COMMIT=${KITE_COMMIT:-s39}
source .deps/env.sh 2>/dev/null
END=${S39_END:-400}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
KITE_TEST_S=200 bash bench/device_run.sh norm > $OUT/norm_stage.log 2>&1
echo "norm rc=$? ($SECONDS s)"; grep -vE "^\s*$" $OUT/norm_stage.log | tail -12 | cut -c1-200
timeout 60 bash tests/run.sh build/test_tune > $OUT/tune_test.log 2>&1
echo "test_tune rc=$? ($SECONDS s)"; grep -E "Checks|:[EF]:|passed" $OUT/tune_test.log | tail -3
if echo "$G" | grep -q H200 && [ $(( END - SECONDS )) -gt 150 ]; then
  S29_TESTED="session 39 call 3 (test_norm; test_gpu on H100s, call 1)" S29_END=$(( END - SECONDS )) \
    bash bench/lab/s29_call1.sh --retune-only
fi
echo "done ($SECONDS s)"
cd $OUT && tar czf logs3.tgz *.log *.txt 2>/dev/null; rm -f *.log *.txt
