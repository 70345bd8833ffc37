# Session 43's first call, whichever GPU comes; run from wip/s42-bwdsums (main + bench/lab/s42/bwdsums.patch)
# with carry [".deps", ".prebuilt"].
#   H200: main's kernels (the patch reversed here), vs_torch at the issues' six N for the ops last seen
#         under torch.compile there first (rmsnorm layernorm softmax_bwd layernorm_bwd), then the rest,
#         until S43_END s; the next call: S41_STEP=check, then S41_STEP=tune (the H200 set is session 23's).
#   H100: bench/lab/s42_bwd.sh (the bwd sums' tests by name, SASS, the A/B against main).
source bench/lab/lab_steps.sh
END=${S43_END:-540}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  patch_reverse bench/lab/s42/bwdsums.patch || exit 1
  echo "H200: main's kernels, the table"
  S43_STEP=table S43_END=$END bash bench/lab/s43_h200.sh
else
  S42_END=$END bash bench/lab/s42_bwd.sh
fi
