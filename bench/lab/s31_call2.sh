# Session 31, call 2, an H200: s29_call1.sh's retune with no tests by name first. Call 1 of this
# session (7a6e2824, H100) tested all 127 layernorm forward variants by name (127 checks, 0
# failures), and the H200 runs the same sm_90a objects (.prebuilt of 3d1e534d; kernels unchanged
# since).  S31_END (default 560 s) bounds it.  Copy h200*.tsv from $OUT to bench/tuned/, make gen.
export KITE_COMMIT=${KITE_COMMIT:-s31}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: no retune"; exit 0; }
S29_TESTED="session 31 call 1 (7a6e2824, H100)" S29_END=${S31_END:-560} exec bash bench/lab/s29_call1.sh --retune-only
