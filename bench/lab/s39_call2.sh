# Session 39, call 2, whichever GPU comes (carry [".deps", ".prebuilt"]).  Call 1's `check` left
# test_norm out (its partitions were test_gpu's, which has no layernorm / *_bwd-sum / rmsnorm_res
# variants); device_run.sh's check now runs it beside test_gpu.
#  H200: the H200 retune (s29_call1.sh --retune-only: layernorm at every N, rmsnorm against
#        torch.compile, softmax / cross_entropy from 24 K, softmax_bwd from 4 K) in S39_END - 270 s,
#        h200*.tsv back in $OUT; then the whole GPU suite (check) in the time left.
#  H100: test_norm alone (norm), then test_tune.
# S39_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s39}
source .deps/env.sh 2>/dev/null
END=${S39_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  # the retune first, on a quiet GPU (main's kernels passed on H100s: session 39), then the suite
  S29_TESTED="session 39 (H100); the suite after the retune, this call" S29_END=$(( END - 270 )) \
    bash bench/lab/s29_call1.sh --retune-only
  echo "retune done ($SECONDS s)"
  KITE_TEST_S=$(( END - SECONDS - 80 )) bash bench/device_run.sh check > $OUT/check.log 2>&1
  echo "check rc=$? ($SECONDS s)"; grep -vE "^\s*$" $OUT/check.log | grep -vE "^[0-9]+x[0-9]+x[0-9]+ " | tail -26 | cut -c1-200
else
  KITE_TEST_S=300 bash bench/device_run.sh norm > $OUT/norm_stage.log 2>&1
  echo "norm rc=$? ($SECONDS s)"; grep -vE "^\s*$" $OUT/norm_stage.log | tail -12 | cut -c1-200
  timeout 120 bash tests/run.sh build/test_tune > $OUT/tune_test.log 2>&1
  echo "test_tune rc=$? ($SECONDS s)"; grep -E "Checks|:[EF]:|passed" $OUT/tune_test.log | tail -3
fi
echo "done ($SECONDS s)"
cd $OUT && tar czf logs2.tgz *.log *.txt 2>/dev/null; rm -f *.log *.txt
