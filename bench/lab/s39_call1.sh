# Session 39, call 1, whichever GPU comes (name no kind; carry [".deps", ".prebuilt"]):
#  H200: the H200 plan (s37_call1.sh: the suspend-hint check, layernorm by name, the retune).
#  H100: the out/include form's GPU suite split over processes (device_run.sh check: test_gemm beside
#        test_gpu's partitions, then the gemm suite), then the brief's SASS counts (LDL/STL over
#        libkite.a, HGMMA in the TMA gemms).
# S39_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s39}
source .deps/env.sh 2>/dev/null
END=${S39_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 && S37_END=$END exec bash bench/lab/s37_call1.sh
bash bench/device_run.sh check > $OUT/check.log 2>&1
echo "check rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/check.log | head -2
grep -vE "^\s*$" $OUT/check.log | tail -40 | cut -c1-200
echo "local-memory instructions (LDL/STL) in libkite.a: $(cuobjdump --dump-sass build/libkite.a | grep -cE '\b(LDL|STL)\b')"
for o in build/obj/gemm/gemm_tma_*.o; do cuobjdump --dump-sass "$o" | grep -c HGMMA; done |
  awk '{ n++; if ($1 > 0) h++ } END { printf "TMA gemm objects with HGMMA: %d of %d\n", h, n }'
echo "done ($SECONDS s)"
cd $OUT && tar czf logs.tgz *.log *.txt 2>/dev/null; rm -f *.log *.txt
