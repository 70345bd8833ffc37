#!/usr/bin/env bash
# The tune's confirmation (kite-bench --tune --confirm K) replayed on session 43's H100 times, no GPU:
# layernorm_bwd and rmsnorm_bwd bf16 of wip/s42-bwdsums, every variant at M*N = 2^26 (the retune,
# bench/lab/s43/retune/logs.tgz) and at 2^28 (the A/B, bench/lab/s43/bwd/ab_all.txt). For each K the
# times file gets the fastest K at 2^26 of each of the six N again at 2^28, kite-gen builds the spans,
# and each N's span variant is compared with the fastest at 2^28.   usage: confirm_sim.sh [K...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xzf "$root/bench/lab/s43/retune/logs.tgz" -C "$tmp"
ks=("$@"); [ $# -gt 0 ] || ks=(0 1 2 3)
for k in "${ks[@]}"; do
  python3 "$root/bench/lab/s44/confirm_sim.py" times "$k" "$tmp" "$root" > "$tmp/sim.times.tsv"
  "$root/build/kite-gen" -q -t "$root/templates" -o "$tmp/out" --gpu h100 --tuned "$root/bench/tuned/h100.tsv" \
    --times "$tmp/sim.times.tsv"
  echo "== K=$k"
  python3 "$root/bench/lab/s44/confirm_sim.py" picks "$k" "$tmp" "$root"
done
