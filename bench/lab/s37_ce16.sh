# Session 37: an H200 probe that does H100 work when an H100 comes.
#  H200: the H200 plan (s37_call1.sh) in S37_END seconds.
#  else: every cross_entropy forward variant at 8 K-32 K (bf16, M*N = 2^28, median of 20), where
#        16 K runs 5% behind 4 K (RESULTS session 37), the dispatched one and the five fastest per N.
export KITE_COMMIT=${KITE_COMMIT:-s37}
source .deps/env.sh 2>/dev/null
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
echo "$G" | grep -q H200 && exec bash bench/lab/s37_call1.sh
bash bench/device_run.sh build > $OUT/build.log 2>&1; echo "build rc=$? ($SECONDS s)"
timeout 200 build/kite-bench --variants --warmup 3 --reps 20 --op ${S37_OPS:-cross_entropy} \
  --n ${S37_N:-4096,8192,12288,16384,24576,32768} > $OUT/var.txt 2>&1; echo "variants rc=$? ($SECONDS s)"
awk '$4 ~ /^[0-9]+$/ && NF >= 9 {
  if ($5 == "*" || $5 == "=") print $1, $4, $5, $6, $7, $10; else print $1, $4, "-", $5, $6, $9 }' $OUT/var.txt > $OUT/all.txt
awk '$3 == "*"' $OUT/all.txt
awk '$3 != "="' $OUT/all.txt | sort -k1,1 -k2n -k5n |
  awk '{ k = $1 " " $2; if (n[k]++ < 5) printf "%-14s %7s %s %-50s %8s %s\n", $1, $2, $3, $4, $5, $6 }'
