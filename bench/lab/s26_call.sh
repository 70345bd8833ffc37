# Session 26: one command for every call, whichever GPU comes.  H200: session 25's retune
# (bench/lab/s25_call2.sh: softmax / cross-entropy cluster rows by name, layernorm retuned at every N,
# softmax / cross_entropy from 24 K, vs torch.compile), the inductor dump left out.  Otherwise (H100):
# the A/B of bench/lab/s26_call1.sh.  S26_FORCE=ab runs the A/B on an H200 too.
export KITE_COMMIT=${KITE_COMMIT:-s26}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if echo "$G" | grep -q H200 && [ "${S26_FORCE:-}" != ab ]; then
  S25_END=0 bash bench/lab/s25_call2.sh
else
  bash bench/lab/s26_call1.sh
fi
