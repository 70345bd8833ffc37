# Session 42, whichever GPU comes, on wip/s42-bwdsums (layernorm_bwd's and rmsnorm_bwd's sums without
# their mask past n; the change is bench/lab/s42/bwdsums.patch).  Carry [".deps", ".prebuilt"]: the
# pack holds main's objects and the branch's, so both trees only link.
#   1. every layernorm_bwd and rmsnorm_bwd variant by name (one process each), their SASS;
#   2. main's kite-bench, built in a copy of this tree with the patch reversed;
#   3. the dispatched rows of both, old and new alternating, two rounds (ab_run.sh's '-');
#   4. the A/B (bench/lab/ab_run.sh): every bf16 variant of the two ops at the issues' six N,
#      S42_ROUNDS rounds alternating old, new, until S42_END s.
export KITE_COMMIT=${KITE_COMMIT:-s42-bwdsums}
source .deps/env.sh 2>/dev/null
source bench/lab/lab_steps.sh
END=${S42_END:-540}
NS=1024,4096,16384,65536,131072,262144
nvidia-smi --query-gpu=name --format=csv,noheader
KITE_BYNAME='layernorm_bwd_* rmsnorm_bwd_*' KITE_CALL_S=${S42_TEST_END:-220} bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -E "build:|prebuilt" $OUT/byname.log | head -3
grep -A12 "tested by name" $OUT/summary.txt
passed_variants $OUT/byname_tests.log > $OUT/passed.txt; echo "variants that printed their line: $(wc -l < $OUT/passed.txt)"
ls build/obj/layernorm_bwd/*.o build/obj/rmsnorm_bwd/*.o | ldl_report "layernorm_bwd and rmsnorm_bwd objects" 8
rm -rf /tmp/old && mkdir -p /tmp/old && tar cf - --exclude=./build . | tar xf - -C /tmp/old
( cd /tmp/old && patch_reverse bench/lab/s42/bwdsums.patch &&
  OUT=/tmp/oldout bash bench/device_run.sh build > /tmp/oldbuild.log 2>&1 )
echo "old build rc=$? ($SECONDS s)"; grep -E "prebuilt|build:" /tmp/oldbuild.log | head -3
[ -x /tmp/old/build/kite-bench ] || { tail -20 /tmp/oldbuild.log; exit 0; }
# the dispatched rows first (bench/lab/ab_run.sh's '-'), then every bf16 variant
AB_ROUNDS=2 AB_TIMEOUT=60 AB_OLD=/tmp/old/build/kite-bench bash bench/lab/ab_run.sh $OUT/disp layernorm_bwd,rmsnorm_bwd - $NS
AB_ROUNDS=${S42_ROUNDS:-2} AB_STOP=$(( END - SECONDS - 60 )) AB_OLD=/tmp/old/build/kite-bench \
  bash bench/lab/ab_run.sh $OUT layernorm_bwd,rmsnorm_bwd '*bf16*' $NS
cd $OUT && tar czf logs.tgz *.log *.txt disp 2>/dev/null; rm -rf *.log passed.txt disp
