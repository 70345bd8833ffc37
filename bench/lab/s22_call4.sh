# Session 22, call 4 (`bash bench/lab/s22_call4.sh`, main's tree, .prebuilt and ab_new/ carried: the
# butterfly's (b60e5e6e) cluster-row sources of softmax, cross_entropy and layernorm).  On an H200 the
# retune of s22_call3.sh; on an H100 main's cluster rows against the butterfly's, one machine, one call:
# bench main's build, swap ab_new/ in, rebuild those objects (`make build`: `make` would regenerate out/), bench again (instructions by ncu, x16).
export KITE_COMMIT=${KITE_COMMIT:-f0bfa3b8}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then exec bash bench/lab/s22_call3.sh; fi
source .deps/env.sh; export PATH=$PATH:/usr/local/cuda/bin
T0=$(date +%s)
KITE_BYNAME=none KITE_CALL_S=1 bash bench/device_run.sh byname > $OUT/build.log 2>&1; grep -E "build:|prebuilt" $OUT/build.log
bench() {
  timeout 100 build/kite-bench --quick --variants --op layernorm,softmax,cross_entropy --n 32768,65536,131072,262144 > $OUT/$1.txt 2>&1
  echo "bench $1 rc=$? at $(( $(date +%s) - T0 )) s"
  timeout 60 ncu --clock-control none --launch-count 1 --kernel-name-base mangled -k "regex:layernorm_bf16_reg_t512_r1_n4_v16_c0_p1_x16_cu" \
    --metrics smsp__inst_executed.sum,gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size \
    build/kite-bench --op layernorm --n 262144 --variants --warmup 0 --reps 1 2>&1 | grep -E "inst_executed|duration|registers|grid_size" | sed "s/^/$1 /"
}
bench main
tar xzf ab_new/ab_new.tgz -C /tmp && for f in $(cd /tmp/ab_new && ls */*.cu); do cp /tmp/ab_new/$f out/$f; done
make -j16 build build/kite-bench > $OUT/build_new.log 2>&1 || tail -20 $OUT/build_new.log
echo "butterfly objects built at $(( $(date +%s) - T0 )) s: $(grep -c '^NVCC' $OUT/build_new.log) compiled"
bench new
ext() { awk '$4 ~ /^[0-9]+$/ { if (NF == 10) print $6 "@" $4, $8; else print $5 "@" $4, $7 }' $1 | sort -u -k1,1; }
echo "==== cluster rows: butterfly / main (TB/s, bf16, M*N = 2^28)"
join <(ext $OUT/new.txt) <(ext $OUT/main.txt) | grep "_x[0-9]" | awk '{ printf "%-58s %6s %6s %6.3f\n", $1, $2, $3, $2 / $3 }'
echo "==== the best of each op and N: main | butterfly"
for f in main new; do ext $OUT/$f.txt | awk -F'[@ ]' '{ k = substr($1, 1, index($1, "_bf16") - 1) " " $2; if (!(k in b) || $3 > b[k]) { b[k] = $3; v[k] = $1 } } END { for (k in b) print k, v[k], b[k] }' | sort -k1,1 -k2n | sed "s/^/$f /"; done
cd $OUT && tar czf logs.tgz *.log 2>/dev/null; rm -f *.log
