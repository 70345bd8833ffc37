# Session 38, call 3, whichever GPU comes (name no kind; carry [".deps", ".prebuilt"]): main with the
# helpers written once (out/include).
#  H200: the H200 plan (s37_call1.sh: the suspend-hint check, layernorm by name, the retune).
#  H100: `make test` whole on the GPU (the include form's first run on one; its objects' code sections
#        were checked equal to the earlier form's off the GPU), then the SASS counts of the brief: local
#        memory instructions over libkite.a, HGMMA in the TMA gemms.
# S38_END (default 560 s) bounds it.
export KITE_COMMIT=${KITE_COMMIT:-s38}
source .deps/env.sh 2>/dev/null
END=${S38_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 && S37_END=$END exec bash bench/lab/s37_call1.sh
KITE_TEST_TIMEOUT=$(( END - 120 )) bash bench/device_run.sh tests > $OUT/tests.log 2>&1
echo "tests rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" $OUT/tests.log | head -2
grep -E "^(==|KITE_SKIPPED|[0-9]+%: Checks)|kite: [0-9]+ passed|make test" $OUT/tests.log | tail -24
echo "local-memory instructions (LDL/STL) in libkite.a: $(cuobjdump --dump-sass build/libkite.a | grep -cE '\b(LDL|STL)\b')"
for o in build/obj/gemm/gemm_tma_*.o; do cuobjdump --dump-sass "$o" | grep -c HGMMA; done |
  awk '{ n++; if ($1 > 0) h++ } END { printf "TMA gemm objects with HGMMA: %d of %d\n", h, n }'
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
