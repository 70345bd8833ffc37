# Session 37: an H200 probe that does H100 work when an H100 comes.
#  H200: the H200 plan (s37_call1.sh) in S37_END seconds.
#  else: every cross_entropy forward variant at 8 K-32 K (bf16, M*N = 2^28, median of 20), where
#        16 K runs 5% behind 4 K (RESULTS session 37), the dispatched one and the five fastest per N.
export KITE_COMMIT=${KITE_COMMIT:-s37}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 && exec bash bench/lab/s37_call1.sh
S37_OPS=${S37_OPS:-cross_entropy} S37_N=${S37_N:-4096,8192,12288,16384,24576,32768} S37_TOP=5 \
  exec bash bench/lab/s37_variants.sh
