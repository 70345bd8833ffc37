# Session 22, call 2 (`bash bench/lab/s22_call2.sh`, ab_old/ carried: main's (f0bfa3b8) cluster-row
# NOTE: its old-vs-new half compared the butterfly with itself: `make` regenerated out/ from the templates before building the swapped sources (s22_call4.sh does it right, with `make build`).
# sources of softmax, cross_entropy and layernorm): the butterfly (b60e5e6e) against the merge of every
# rank in turn, same machine, same call: bench and test the new build, then swap the old sources in,
# rebuild those objects alone, bench again.
export KITE_COMMIT=${KITE_COMMIT:-b60e5e6e}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
T0=$(date +%s)
KITE_BYNAME='none' KITE_CALL_S=1 bash bench/device_run.sh byname > $OUT/build.log 2>&1; grep -E "build:|prebuilt|rror" $OUT/build.log | head
top() {
  awk '$4 ~ /^[0-9]+$/ { if (NF == 10) print $1, $4, $6 ($5 == "*" ? "*" : ""), $8; else print $1, $4, $5, $7 }' "$1" \
    | sort -k1,1 -k2n -k4nr | awk '{ k = $1 " " $2; if (n[k]++ < 4 || $3 ~ /\*$/) printf "%-14s %7s %-48s %6s\n", $1, $2, $3, $4 }'
}
ldl() { printf '%s\n' "$@" | xargs -P 8 -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "LDL/STL: {}"'; echo "sass: $# objects checked"; }
objs=$(cd ab_old && ls */*.cu | sed 's#^#build/obj/#; s#\.cu$#.o#')
bench() { timeout 100 build/kite-bench --quick --variants --op layernorm,softmax,cross_entropy --n 65536,131072,262144 > $OUT/$1.txt 2>&1; echo "bench $1 rc=$? at $(( $(date +%s) - T0 )) s"; }
bench new
ldl $objs
KITE_BYNAME='layernorm_bf16_*_x* layernorm_f16_*_x* layernorm_f32_*_x* softmax_bf16_*_x* cross_entropy_bf16_*_x*' KITE_CALL_S=110 \
  bash bench/device_run.sh byname > $OUT/bn.log 2>&1; grep -A8 "tested by name" $OUT/bn.log
for f in $(cd ab_old && ls */*.cu); do cp ab_old/$f out/$f; done
{ make -j16 && make -j16 build/kite-bench; } > $OUT/build_old.log 2>&1 || tail -20 $OUT/build_old.log
echo "old objects built at $(( $(date +%s) - T0 )) s: $(grep -c '^NVCC' $OUT/build_old.log) compiled"
ldl $objs
bench old
echo "==== new (butterfly)"; top $OUT/new.txt
echo "==== old (every rank in turn)"; top $OUT/old.txt
echo "==== cluster rows, new vs old (TB/s)"
join <(awk '$4 ~ /^[0-9]+$/ && $0 ~ /_x[0-9]/ { if (NF == 10) print $6 "@" $4, $8; else print $5 "@" $4, $7 }' $OUT/new.txt | sort) \
     <(awk '$4 ~ /^[0-9]+$/ && $0 ~ /_x[0-9]/ { if (NF == 10) print $6 "@" $4, $8; else print $5 "@" $4, $7 }' $OUT/old.txt | sort) \
  | awk '{ printf "%-58s %6s %6s %6.3f\n", $1, $2, $3, $2 / $3 }'
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
