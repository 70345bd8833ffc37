# Session 30 (written in session 29), call 1, whichever GPU comes; S30_END (default 560, seconds
# from the start) bounds it: give the call's limit ~40 s more.  Most valuable part first.
#  1. The 18 layernorm variants whose grid changed in 17b524e5 (one CTA a row), by name: 15 have not
#     run with it.
#  2. H200: s29_call1.sh's H200 branch (layernorm retuned at every N first, then rmsnorm against
#     torch.compile, softmax / cross_entropy from 24 K, softmax_bwd from 4 K).  Copy h200*.tsv from
#     $OUT to bench/tuned/, make gen, commit, RESULTS, README's speed paragraph.
#     H100: layernorm tuned per dtype into $OUT/t100ln_<dtype>.tsv (the H100 set's 16 K pick should
#     move to reg t512 n4); merge here with
#     bench/lab/tuned_merge.py bench/tuned/h100 bench/tuned/h200 bench/tuned/h100 <dir>/t100ln_bf16 ...
export KITE_COMMIT=${KITE_COMMIT:-s30}
source .deps/env.sh 2>/dev/null
END=${S30_END:-560}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
globs=; for d in bf16 f16 f32; do for t in 128 256 512; do globs="$globs layernorm_${d}_reg_t${t}_r1_n[24]_v16_c0_p1"; done; done
KITE_BYNAME="$globs" KITE_CALL_S=150 bash bench/device_run.sh byname > $OUT/byname.log 2>&1
echo "byname rc=$? ($SECONDS s)"; grep -A4 "tested by name" $OUT/summary.txt
if ! grep -q " 0 failures, 0 errors" $OUT/summary.txt; then echo "a test failed: stop"; exit 0; fi
if echo "$G" | grep -q H200; then
  S29_END=$(( END - SECONDS )) exec bash bench/lab/s29_call1.sh --retune-only   # it packs the logs
else
  bash bench/lab/tune_dtypes.sh layernorm t100ln $(( END - SECONDS ))
  grep -hE "N=(4096|8192|12288|16384) " $OUT/tune_bf16.log 2>/dev/null
fi
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
