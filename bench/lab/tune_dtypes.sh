# `kite-bench --tune` of one row op, one dtype at a time, each into its own pair of files
# ($OUT/PREFIX_<dtype>.tsv and .times.tsv, logs $OUT/tune_<dtype>.log): the groups of one GPU's set,
# merged here with bench/lab/tuned_merge.py (its header says how).  Stops starting tunes when fewer
# than 70 of LEFT seconds (from this script's start) remain.
#   bash bench/lab/tune_dtypes.sh OP PREFIX LEFT [DTYPE ...]   (default dtypes: bf16 f16 f32)
op=$1 prefix=$2 end=$3; shift 3
for d in ${*:-bf16 f16 f32}; do
  left=$(( end - SECONDS - 10 )); [ $left -gt 60 ] || break
  timeout $left build/kite-bench --tune $OUT/${prefix}_$d.tsv --times $OUT/${prefix}_$d.times.tsv --op $op \
    --dtype $d > $OUT/tune_$d.log 2>&1
  echo "$op $d tune rc=$? ($SECONDS s)"; tail -1 $OUT/tune_$d.log
done
