# rmsnorm_bwd's half of wip/s42-bwdsums (its chunk_dot without the mask past n) tuned with the confirm
# and timed against main in one run, on an H100 (written in session 44 for the call after
# s44_first.sh's; commit that call's h100*.tsv first if they were kept).  Run from main with carry
# [".deps", ".prebuilt"] (the pack holds both trees' objects: each only links).
#   1. main's kite-bench built in a copy of this tree (/tmp/old);
#   2. here the rmsnorm_bwd half of bench/lab/s42/bwdsums.patch applied (patch_only) and built; its
#      variants passed their tests by name in session 43 (the same sources: the whole patch);
#   3. rmsnorm_bwd tuned (bf16, f16) with the confirm, merged into bench/tuned/h100.*, rebuilt;
#   4. the dispatched rows of main and of the branch alternating, AB_ROUNDS rounds (bench/lab/ab_run.sh '-').
#   Merge the half (git apply --include='*/rmsnorm_bwd/*' bench/lab/s42/bwdsums.patch, the returned
#   h100*.tsv) only if new / old <= 1 at every N beyond noise; the H200's set then needs the same.
export KITE_COMMIT=${KITE_COMMIT:-s44-rms}
source .deps/env.sh 2>/dev/null
source bench/lab/lab_steps.sh
END=${S44_END:-540}
NS=$ISSUE_NS
gpu_is H100 || { echo "not an H100: nothing run (the tables here are the H100's)"; exit 0; }
rm -rf /tmp/old && mkdir -p /tmp/old && tar cf - --exclude=./build . | tar xf - -C /tmp/old
( cd /tmp/old && OUT=/tmp/oldout bash bench/device_run.sh build > /tmp/oldbuild.log 2>&1 )
echo "old build rc=$? ($SECONDS s)"; grep prebuilt /tmp/oldbuild.log | head -2
[ -x /tmp/old/build/kite-bench ] || { tail -20 /tmp/oldbuild.log; exit 0; }
patch_only /rmsnorm_bwd/ bench/lab/s42/bwdsums.patch || { echo "the rmsnorm_bwd half does not apply"; exit 0; }
rm -rf build   # a warm machine's objects are main's: .prebuilt has the half's, unpacked into an empty build/ only
lab_build
ls build/obj/rmsnorm_bwd/*.o | ldl_report "rmsnorm_bwd objects" 8
tune_ops rmsnorm_bwd "bf16 f16" h100 $(( END - 120 )) 60
tune_picks
AB_ROUNDS=${AB_ROUNDS:-3} AB_TIMEOUT=60 AB_STOP=$(( END - 40 )) AB_OLD=/tmp/old/build/kite-bench \
  bash bench/lab/ab_run.sh $OUT rmsnorm_bwd - $NS
cd $OUT && tar czf logs.tgz *.log t.*.tsv 2>/dev/null; rm -f *.log t.*.tsv
