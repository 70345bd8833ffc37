# Session 27 (written in session 26), call 1, whichever GPU comes:
#  H200: session 25's retune (bench/lab/s25_call2.sh without its inductor dump: layernorm at every N,
#        with the 1024-thread register cluster rows; softmax / cross_entropy from 24 K; vs torch.compile),
#        then softmax_bwd retuned from 4 K (on an H100 the H200 table's pick ran 1.145x the best at 16 K).
#        Copy h200.tsv / h200.times.tsv from $OUT to bench/tuned/, make gen, commit.
#  H100: the rest of session 26's H100 tune (f32 for every op, f16 for layernorm, layernorm_bwd and
#        rmsnorm_bwd) into $OUT/t100*.tsv; merge here with
#        bench/lab/tuned_merge.py bench/tuned/h100 bench/tuned/h200 bench/tuned/h100 <dir>/t100f32 <dir>/t100f16
export KITE_COMMIT=${KITE_COMMIT:-s27}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  S25_END=0 S25_TUNE2_S=${S27_TUNE2_S:-100} bash bench/lab/s25_call2.sh
  left=$(( 560 - SECONDS ))
  [ $left -gt 60 ] && KITE_TUNE_KEEP_S=20 KITE_OPS=softmax_bwd KITE_VS_OPS=softmax_bwd KITE_TUNE_FROM=4096 \
    KITE_CALL_S=$left bash bench/device_run.sh retune > $OUT/retune3.log 2>&1
  grep -E "^tune|table|^softmax_bwd " $OUT/summary.txt | tail -12
else
  KITE_BYNAME=no-such-variant bash bench/device_run.sh byname > $OUT/build_only.log 2>&1   # the build alone
  grep -E "build:|prebuilt" $OUT/build_only.log | head -2
  timeout 330 build/kite-bench --tune $OUT/t100f32.tsv --times $OUT/t100f32.times.tsv --dtype f32 > $OUT/tune32.log 2>&1
  echo "f32 tune rc=$? ($SECONDS s)"; tail -1 $OUT/tune32.log
  left=$(( 570 - SECONDS ))
  [ $left -gt 30 ] && timeout $left build/kite-bench --tune $OUT/t100f16.tsv --times $OUT/t100f16.times.tsv \
    --dtype f16 --op layernorm,layernorm_bwd,rmsnorm_bwd > $OUT/tune16.log 2>&1
  echo "f16 tune rc=$? ($SECONDS s)"; tail -1 $OUT/tune16.log
fi
# the measured set the runtime picks on this GPU (session 27's per-GPU dispatch), and the rest of the launch case
{ make -j16 build/test_gpu && CK_RUN_CASE=launch timeout 60 build/test_gpu; } > $OUT/set.log 2>&1
grep -E "measured set|passed|failed|Error" $OUT/set.log | head -4
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
