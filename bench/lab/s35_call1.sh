# Session 35, call 1, whichever GPU comes.
#  H200: every layernorm variant tested by name (the first run of sessions 24-34's kernel changes
#        there), then
#  H200: the retune (s29_call1.sh --retune-only: layernorm at every N, rmsnorm against
#        torch.compile, softmax / cross_entropy from 24 K, softmax_bwd from 4 K in the time left);
#        copy h200*.tsv from $OUT to bench/tuned/, make gen.
#  H100: ncu of the dispatched bf16 layernorm at 256 K, executed instructions per SASS line
#        (NOTES Next (session 35) 3: where the long rows' instructions go).
# main's kite-bench is kept as build/kite-bench-main for a later A/B on the same warm machine.
# S35_END (default 560 s) bounds it; S35_BYNAME_S (default 210 s) the tests.
export KITE_COMMIT=${KITE_COMMIT:-s35}
source .deps/env.sh 2>/dev/null
END=${S35_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
bash bench/device_run.sh build > $OUT/build.log 2>&1; echo "build rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/build.log
cp build/kite-bench build/kite-bench-main
if echo "$G" | grep -q H200; then   # (on H100s they passed by name in session 34)
  KITE_BYNAME='layernorm_bf16_* layernorm_f16_* layernorm_f32_*' KITE_CALL_S=${S35_BYNAME_S:-210} \
    bash bench/device_run.sh byname > $OUT/byname.log 2>&1
  echo "byname rc=$? ($SECONDS s)"; grep -A4 "tested by name" $OUT/summary.txt
  grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
  S29_TESTED="session 35 call 1 (layernorm by name, this call)" S29_END=$(( END - SECONDS )) \
    exec bash bench/lab/s29_call1.sh --retune-only
fi
# H100: one launch each of the dispatched bf16 kernels below, their SASS with executed counts
for on in layernorm:262144 layernorm:65536 layernorm_bwd:262144; do
  op=${on%:*} n=${on#*:}; [ $(( END - SECONDS )) -ge 60 ] || break
  timeout $(( END - SECONDS - 20 )) ncu --clock-control none --launch-count 1 -k "regex:^${op}(_fwd)?$" \
    --section SourceCounters --section InstructionStats -o /tmp/$op.$n -f \
    build/kite-bench --op $op --n $n --warmup 0 --reps 1 > $OUT/ncu_run.$op.$n.txt 2>&1
  echo "ncu $op $n rc=$? ($SECONDS s)"; tail -2 $OUT/ncu_run.$op.$n.txt
  ncu --import /tmp/$op.$n.ncu-rep --page source --csv --print-source sass > $OUT/sass.$op.$n.csv 2> $OUT/src.$op.$n.err
  echo "source page rc=$?: $(wc -l < $OUT/sass.$op.$n.csv) lines"; head -3 $OUT/src.$op.$n.err
  ncu --import /tmp/$op.$n.ncu-rep --page details > $OUT/details.$op.$n.txt 2>&1
  grep -E "Executed Instructions|Registers|Block Size|Cluster Size|Grid Size" $OUT/details.$op.$n.txt | head -8
done
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
