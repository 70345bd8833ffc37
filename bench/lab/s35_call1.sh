# Session 35, call 1, whichever GPU comes.  Every layernorm variant tested by name (on an H200 the
# first run of sessions 24-34's kernel changes there), then:
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
KITE_BYNAME='layernorm_*' KITE_CALL_S=${S35_BYNAME_S:-210} bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/byname.log; grep -A4 "tested by name" $OUT/summary.txt
grep -E "(Failure|Error)" $OUT/byname_tests.log | cut -c1-300 | head -5
cp build/kite-bench build/kite-bench-main
if echo "$G" | grep -q H200; then
  S29_TESTED="session 35 call 1 (layernorm by name, this call)" S29_END=$(( END - SECONDS )) \
    exec bash bench/lab/s29_call1.sh --retune-only
fi
# H100: one launch of the dispatched bf16 layernorm at 256 K, its SASS with executed counts
ncu --clock-control none --launch-count 1 -k "regex:^layernorm(_fwd)?$" --section SourceCounters \
  --section InstructionStats -o /tmp/ln256 -f build/kite-bench --op layernorm --n 262144 --warmup 0 --reps 1 \
  > $OUT/ncu_run.txt 2>&1
echo "ncu rc=$? ($SECONDS s)"; tail -3 $OUT/ncu_run.txt
ncu --import /tmp/ln256.ncu-rep --page source --csv --print-source sass > $OUT/ln256_sass.csv 2> $OUT/ncu_src.err
echo "source page rc=$?: $(wc -l < $OUT/ln256_sass.csv) lines"; head -3 $OUT/ncu_src.err
ncu --import /tmp/ln256.ncu-rep --page details > $OUT/ln256_details.txt 2>&1
grep -A30 "Source Counters" $OUT/ln256_details.txt | head -40
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
