# Session 27, the last ~300 s of device time. H200: layernorm retuned at every N (see s27_call5.sh),
# within 200 s. H100: the gemm tune on the H100 (the H100 set's gemm lines are still the H200's) into
# $OUT/t100gemm.tsv / .times.tsv; merge here with
#   bench/lab/tuned_merge.py bench/tuned/h100 bench/tuned/h100 <dir>/t100gemm   (only if it finished)
export KITE_COMMIT=${KITE_COMMIT:-s27}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  KITE_TUNE_KEEP_S=30 KITE_OPS=layernorm KITE_VS_OPS=layernorm KITE_TUNE_FROM=64 KITE_CALL_S=200 \
    bash bench/device_run.sh retune > $OUT/retune.log 2>&1
  grep -E "^tune|table|vs_torch rc|^layernorm " $OUT/summary.txt
else
  KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1   # the build alone
  grep -E "build:" $OUT/build_only.log | head -1
  printf 'op\tdtype\tdtype_out\tm\tn\tk\tvariant\ttime_us\trunner_up\trunner_up_us\tdevice\tdate\tcommit\n' > $OUT/t100gemm.tsv
  timeout $(( 250 - SECONDS )) build/kite-bench gemm --tune $OUT/t100gemm.tsv --times $OUT/t100gemm.times.tsv > $OUT/tunegemm.log 2>&1
  echo "gemm tune rc=$? ($SECONDS s)"; tail -2 $OUT/tunegemm.log
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
