# Session 43: main's kernels against torch.compile on an H200 at the issues' six N, the ops last seen
# under torch.compile there first; on any other GPU it stops at once (the H100's table is session 37's).
# Carry [".deps", ".prebuilt"].
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
S37_DONE=x S37_END=${S43_END:-540} \
  S37_OPS="rmsnorm layernorm softmax_bwd layernorm_bwd softmax cross_entropy rmsnorm_bwd cross_entropy_bwd" \
  bash bench/lab/s37_table.sh
cd $OUT && tar czf table.tgz *.txt *.csv 2>/dev/null; rm -f *.txt *.csv
