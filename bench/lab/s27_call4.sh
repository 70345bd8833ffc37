# Session 27, call 4, with what device time is left (~520 s): on an H200 only, session 25's retune
# (s25_call2.sh without the inductor dump: the cluster rows by name, layernorm at every N, softmax /
# cross_entropy from 24 K, vs torch.compile). On an H100: nothing (its set was finished in call 1).
export KITE_COMMIT=${KITE_COMMIT:-s27}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: nothing to do"; exit 0; }
S25_END=0 S25_TEST_S=${S27_TEST_S:-90} S25_TUNE_S=${S27_TUNE_S:-120} S25_TUNE2_S=${S27_TUNE2_S:-90} bash bench/lab/s25_call2.sh
