# Session 41: the H200 set retuned on the kernels of sessions 24-41 (wip/s41-sbwd: main + softmax_bwd's
# dot without its mask past n), whichever GPU comes (the set of that GPU is tuned; carry [".deps",
# ".prebuilt"]).  Steps, one call each:
#   S41_STEP=tune   build; every softmax_bwd variant tested by name (its code changed), their SASS; then
#                   the ops of S41_OPS tuned (dtypes S41_DTYPES, default bf16), merged into
#                   bench/tuned/<gpu>.* by tuned_merge.py (whole (op, dtype) groups), the table rebuilt,
#                   kite-bench at the issues' six N (copy in the same run).  On an H100, S41_OPS unset,
#                   softmax_bwd alone (bf16, f16).  Copy <gpu>*.tsv from $OUT
#                   into bench/tuned/, edit line 1, make gen.
#   S41_STEP=table  bench/lab/s37_table.sh: kite-bench, then vs_torch.py op by op at the six N; then
#                   inductor_probe.py (layernorm, rmsnorm at 1 K and 16 K).
#   S41_STEP=check  bench/lab/s40_call1.sh: the whole GPU check (device_run.sh check) and its not_run.txt.
export KITE_COMMIT=${KITE_COMMIT:-s41}
source .deps/env.sh 2>/dev/null
source bench/lab/lab_steps.sh
END=${S41_END:-560}
OPS=${S41_OPS:-softmax_bwd,rmsnorm,layernorm,softmax,cross_entropy,layernorm_bwd,rmsnorm_bwd,cross_entropy_bwd}
NS=1024,4096,16384,65536,131072,262144
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
GPU=h100; echo "$G" | grep -q H200 && GPU=h200
# an H100's set was tuned in sessions 37-40: there only softmax_bwd changed
[ $GPU = h100 ] && [ -z "${S41_OPS:-}" ] && { OPS=softmax_bwd; S41_DTYPES=${S41_DTYPES:-bf16 f16}; }
case ${S41_STEP:-tune} in
  table) S37_END=$(( END - 45 )) bash bench/lab/s37_table.sh
         # how torch.compile holds the rows where it led kite on the H200 in session 23
         timeout $(( END - SECONDS )) python3 bench/lab/inductor_probe.py layernorm rmsnorm 1024 16384 > $OUT/probe.txt 2>&1
         echo "probe rc=$? ($SECONDS s)"; grep -E "^==|num_warps|launch" $OUT/probe.txt | cut -c1-160 | head -24
         cd $OUT && tar czf table.tgz *.txt *.csv 2>/dev/null; rm -f *.txt *.csv; exit 0 ;;
  check) S40_TEST_S=${S41_TEST_S:-440} exec bash bench/lab/s40_call1.sh ;;
esac
# softmax_bwd by name, one process a variant, every one stopped S41_TEST_END s after the start
KITE_BYNAME='softmax_bwd_*' KITE_CALL_S=${S41_TEST_END:-260} bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "build:|prebuilt" $OUT/byname.log | head -3
grep -A12 "tested by name" $OUT/summary.txt
passed_variants $OUT/byname_tests.log > $OUT/passed.txt; echo "softmax_bwd variants that printed their line: $(wc -l < $OUT/passed.txt)"
ls build/obj/softmax_bwd/*.o | ldl_report "softmax_bwd objects" 8
tune_ops "$OPS" "${S41_DTYPES:-bf16}" $GPU $END 110
timeout $(( END - SECONDS - 5 )) build/kite-bench --op all --n $NS > $OUT/bench_after.txt 2>&1; echo "bench rc=$? ($SECONDS s)"
bench_rows $OUT/bench_after.txt
cd $OUT && tar czf logs.tgz *.log *.txt t.*.tsv 2>/dev/null; rm -f *.log t.*.tsv
