# Steps the session lab scripts share (s40_c3.sh, s40_call1.sh, s41_h200.sh, s42_bwd.sh, s43_first.sh,
# s43_h200.sh, s44_first.sh, s44_rms.sh), sourced from
# the repository root on the GPU machine; the SASS helpers come with them (bench/sass.sh).
source bench/sass.sh

ISSUE_NS=1024,4096,16384,65536,131072,262144   # the row lengths issue 5 measures at (issue 2's among them)

# gpu_is PATTERN: the GPU's name printed; whether it holds PATTERN.
gpu_is() {
  local g; g=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$g"
  grep -q "$1" <<<"$g"
}

# lab_build: device_run.sh's build, its status and whether .prebuilt served it (its own log is
# $OUT/build_run.log: $OUT/build.log is make's, written by the build itself).
lab_build() {
  bash bench/device_run.sh build > $OUT/build_run.log 2>&1; local rc=$?
  echo "build rc=$rc ($SECONDS s)"; grep prebuilt $OUT/build_run.log; return $rc
}

# passed_variants LOG...: the variants whose test printed its line (after every
# assertion of theirs passed), one a line, sorted.
passed_variants() {
  cat "$@" | grep -oE '^[a-z0-9_]+ +[0-9]+ shapes, worst|^variant [a-z0-9_]+' |
    awk '{ print ($1 == "variant") ? $2 : $1 }' | sort -u
}

# bench_rows FILE: kite-bench's rows in FILE, op, N, variant, µs, TB/s and the ratio to the copy.
bench_rows() {
  grep -E "^(copy|rmsnorm|softmax|cross_entropy|layernorm)[a-z_]* " "$1" | awk '{ print $1, $4, $5, $6, $7, $NF }'
}

# tune_one OP DTYPE: OP's tune in DTYPE (kite-bench --tune, 60 s at most) into
# $OUT/t.OP.DTYPE.tsv and .times.tsv, its log $OUT/tune.OP.DTYPE.log; its status returned.
tune_one() {
  timeout 60 build/kite-bench --tune $OUT/t.$1.$2.tsv --times $OUT/t.$1.$2.times.tsv --op $1 --dtype $2 \
    > $OUT/tune.$1.$2.log 2>&1
}

# tune_picks: the tunes' picks (their logs' "tune" lines) at the issues' row lengths.
tune_picks() {
  grep -h "^tune " $OUT/tune.*.log | grep -E "N=(${ISSUE_NS//,/|}) "
}

# tune_ops OPS DTYPES GPU END KEEP: each op of OPS (comma list) and dtype of DTYPES
# tuned (kite-bench --tune, 60 s at most) while more than KEEP s of END (from the
# script's start) are left; the tunes merged into bench/tuned/GPU.* (whole (op, dtype)
# groups, tuned_merge.py), which go to $OUT; the table regenerated, libkite.so and
# kite-bench rebuilt.  Logs and t.* tables in $OUT.
tune_ops() {
  local ops=$1 dtypes=$2 gpu=$3 end=$4 keep=$5 d op t=
  for d in $dtypes; do
    for op in ${ops//,/ }; do
      [ $(( end - SECONDS )) -gt $keep ] || { echo "tune $op $d: not run"; continue; }
      tune_one $op $d && t+=" $OUT/t.$op.$d"; echo "tune $op $d rc=$? ($SECONDS s)"
    done
  done
  [ -n "$t" ] && python3 bench/lab/tuned_merge.py bench/tuned/$gpu bench/tuned/$gpu bench/tuned/$gpu $t
  cp bench/tuned/$gpu.tsv bench/tuned/$gpu.times.tsv $OUT/
  { make gen && make -j16 build/libkite.so build/kite-bench; } > $OUT/regen.log 2>&1; echo "regen rc=$? ($SECONDS s)"
  grep "kite-gen:" $OUT/regen.log
}

# patch_only PART PATCH: the files of PATCH whose path holds PART applied to this tree (git's or
# patch's: git apply --include where git is missing).
patch_only() {
  awk -v p="$1" '/^diff --git / { keep = index($0, p) > 0 } keep' "$2" > /tmp/patch_only.diff
  [ -s /tmp/patch_only.diff ] && { git apply /tmp/patch_only.diff 2>/dev/null || patch -p1 -s < /tmp/patch_only.diff; }
}

# patch_reverse PATCH: this tree with PATCH (a diff against it, from the repository
# root) taken out; git's or patch's, whichever the machine has.
patch_reverse() {
  git apply -R "$1" 2>/dev/null || patch -R -p1 -s < "$1"
}
