# Session 22, call 1 (`bash bench/lab/s22_call1.sh` from the repo root): 8fdac249's butterfly merge of
# cluster rows (softmax, cross_entropy, layernorm) timed against the other variants, then tested by name.
export KITE_COMMIT=${KITE_COMMIT:-8fdac249}
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
T0=$(date +%s)
KITE_BYNAME='none' KITE_CALL_S=1 bash bench/device_run.sh byname > $OUT/build.log 2>&1; grep -E "build:|prebuilt|rror" $OUT/build.log | head
# the best 5 of each op and N, and the dispatched one (*): op N variant TB/s
top() {
  awk '$4 ~ /^[0-9]+$/ { if (NF == 10) print $1, $4, $6 ($5 == "*" ? "*" : ""), $8; else print $1, $4, $5, $7 }' "$1" \
    | sort -k1,1 -k2n -k4nr | awk '{ k = $1 " " $2; if (n[k]++ < 5 || $3 ~ /\*$/) printf "%-14s %7s %-48s %6s\n", $1, $2, $3, $4 }'
}
timeout 150 build/kite-bench --quick --variants --op ${S22_OPS:-layernorm,softmax,cross_entropy} --n 32768,65536,131072,262144 > $OUT/variants.txt 2>&1
echo "bench rc=$? at $(( $(date +%s) - T0 )) s"; top $OUT/variants.txt
left=$(( ${S22_CALL_S:-560} - ($(date +%s) - T0) ))
KITE_BYNAME=${S22_BYNAME:-'softmax_*_x* cross_entropy_*_x* layernorm_bf16_*_x* layernorm_f16_*_x* layernorm_f32_*_x*'} \
  KITE_CALL_S=$left bash bench/device_run.sh byname > $OUT/bn.log 2>&1; grep -A10 "tested by name" $OUT/bn.log
objs=$(ls build/obj/{softmax,cross_entropy,layernorm}/*_x*.o)
printf '%s\n' $objs | xargs -P 8 -I{} sh -c 'cuobjdump --dump-sass "{}" 2>/dev/null | grep -qE "[[:space:]](LDL|STL)[. ]" && echo "LDL/STL: {}"'
echo "sass checked: $(printf '%s\n' $objs | wc -l) objects; $(( $(date +%s) - T0 )) s"
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
