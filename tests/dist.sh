#!/usr/bin/env bash
# The uses of kite beyond its own tree, one case per call (test_dist.c runs them):
#   committed   a fresh kite-gen writes exactly the committed out/
#   compiled    every manifest variant was compiled by nvcc for sm_90a, no spills
#   vendor      out/ + runtime/ alone build a library and a consumer links to it
#   extend      a new template folder shows up in out/, manifest, table, and runs
#   tables      every GPU's measured files (bench/tuned/<gpu>.tsv) make its set of the table
# Usage: tests/dist.sh CASE TMPDIR   (run from the repository root)
set -eu
case_=$1 tmp=$2
root=$(pwd)
gen=$root/build/kite-gen
fix=$root/tests/fixtures
cuobjdump=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/cuobjdump

manifest_count() { tail -n +2 "$1" | wc -l; }

# The GPUs measured in bench/tuned/ in make gen's order: KITE_GPU (default h200) first, the
# others by name.
gpus() {
  local first=${KITE_GPU:-h200} tsv g
  echo "$first"
  for tsv in bench/tuned/*.tsv; do
    case $tsv in *.times.tsv) continue ;; esac
    g=$(basename "$tsv" .tsv)
    [ "$g" = "$first" ] || echo "$g"
  done | LC_ALL=C sort
}

# What make gen writes, into $1: a measured set per GPU, from bench/tuned/<gpu>.tsv and .times.tsv
# where they exist.
gen_all() {
  local g args=()
  for g in $(gpus); do
    args+=(--gpu "$g")
    [ -f "bench/tuned/$g.tsv" ] && args+=(--tuned "bench/tuned/$g.tsv")
    [ -f "bench/tuned/$g.times.tsv" ] && args+=(--times "bench/tuned/$g.times.tsv")
  done
  "$gen" -q -t templates -o "$1" "${args[@]}"
}

committed() {
  gen_all "$tmp/out"
  diff -r out "$tmp/out"
}

compiled() {
  local n=0
  while IFS=$'\t' read -r name op _; do
    obj=build/obj/$op/$name.o
    [ -f "$obj" ] || { echo "not compiled: $obj"; exit 1; }
    grep -q "Compiling entry function .* for 'sm_90a'" "$obj.log" || { echo "not built for sm_90a: $obj.log"; exit 1; }
    if grep -E "[1-9][0-9]* bytes (spill|stack)" "$obj.log"; then echo "spills in $name"; exit 1; fi
    if [ -x "$cuobjdump" ] && ! "$cuobjdump" --list-elf "$obj" | grep -q sm_90a; then
      echo "no sm_90a code in $obj"; exit 1
    fi
    n=$((n + 1))
  done < <(tail -n +2 out/manifest.tsv)
  [ "$n" -gt 0 ]
  echo "compiled: $n variants, sm_90a, no spills"
}

# Builds the consumer against the kite tree in $tmp/app/kite and runs it.
build_consumer() {
  cp "$fix/vendor/consumer.c" "$fix/vendor/Makefile" "$tmp/app/"
  make -s -C "$tmp/app" -j"$(nproc)" consumer >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
  "$tmp/app/consumer" "$1" "$(manifest_count "$tmp/app/kite/out/manifest.tsv")"
}

# The copy must compile with nothing from this tree: every quoted include
# names a header the copy's runtime/ holds, or a shared helper of its
# out/include/ (kite-gen's include()), and one variant of each op and
# dtype is compiled there from scratch.  The others take the objects that
# `make` compiled from the same bytes (the copy was just made) with the same
# kite.mk rule: compiling all of them again took 2400 s of CI's two cores
# (and overflowed Check's duration field).  KITE_VENDOR_FULL=1 compiles
# every variant in the copy.
seed_objects() {
  local kite=$1 hdr name op dtype fresh=0 seeded=0
  local -A first=()
  for hdr in $(grep -rho '#include "[^"]*"' "$kite/out" "$kite/runtime" | cut -d'"' -f2 | sort -u); do
    case $hdr in
      ../include/*) [ -f "$kite/out/include/${hdr#../include/}" ] ||
                      { echo "vendor: $hdr is not in the copy's out/include/"; exit 1; } ;;
      *) [ -f "$kite/runtime/$hdr" ] || { echo "vendor: $hdr is not in the copy's runtime/"; exit 1; } ;;
    esac
  done
  while IFS=$'\t' read -r name op dtype _; do
    if [ -n "${KITE_VENDOR_FULL:-}" ] || [ -z "${first[$op.$dtype]:-}" ]; then
      first[$op.$dtype]=1 fresh=$((fresh + 1))
      continue
    fi
    mkdir -p "$kite/build/obj/$op"
    cp "build/obj/$op/$name.o" "$kite/build/obj/$op/"
    seeded=$((seeded + 1))
  done < <(tail -n +2 out/manifest.tsv)
  # newer than the copied sources, so make compiles only the fresh ones
  [ "$seeded" -eq 0 ] || find "$kite/build/obj" -name '*.o' -exec touch {} +
  echo "vendor: $fresh variants compiled in the copy, $seeded objects of the main build"
}

vendor() {
  mkdir -p "$tmp/app/kite"
  cp -r out runtime "$tmp/app/kite/"
  seed_objects "$tmp/app/kite"
  build_consumer "$(awk -F'\t' '$2 == "softmax" { print $1; exit }' out/manifest.tsv)"
}

extend() {
  cp -r templates "$tmp/templates"
  cp -r "$fix/ext/square" "$tmp/templates/"
  "$gen" -q -t "$tmp/templates" -o "$tmp/full"
  ls "$tmp/full/square/"*.cu >/dev/null
  grep -q "^square_f32_t256	square	" "$tmp/full/manifest.tsv"
  grep -q "kite_v_square_bf16_t256" "$tmp/full/kite_table.c"
  [ "$(manifest_count "$tmp/full/manifest.tsv")" -eq $(( $(manifest_count out/manifest.tsv) + 2 )) ]
  mkdir -p "$tmp/app/kite"
  cp -r runtime "$tmp/app/kite/"
  "$gen" -q -t "$tmp/templates" -o "$tmp/app/kite/out" --only 'square_*'
  build_consumer square_f32_t256
}

# Every GPU's measured files (bench/tuned/<gpu>.tsv, .times.tsv) make a set of the table, set i for
# the i-th GPU of make gen's order, and at every tuned row shape the span of that set covering N
# names the variant measured fastest there (a "failed" line names none).
tables() {
  local g i=0 n=0 tsv arr
  gen_all "$tmp/out"
  for g in $(gpus); do
    tsv=bench/tuned/$g.tsv
    grep -q "^  {\"$g\", kite_rules_$i, " "$tmp/out/kite_table.c" || { echo "tables: set $i is not $g's"; exit 1; }
    arr=kite_row_spans_$i
    i=$((i + 1))
    [ -f "$tsv" ] || continue
    awk -F'\t' -v gpu="$g" -v arr="$arr" '
      FNR == NR { if (index($0, "static const struct kite_row_span " arr "[] = {") == 1) { in_ = 1; next }
                  if (in_ && /^};/) in_ = 0
                  if (in_ && match($0, /^  \{"[a-z_]+", KITE_[A-Z0-9]+, [0-9]+, [0-9]+, [0-9]+\},  \/\* [a-z0-9_]+ \*\//)) {
                    split($0, f, /[{}",\/* ]+/); s[++ns] = f[2] " " f[3] " " f[4] " " f[5] " " f[7] }
                  next }
      $1 == "op" || /^#/ || $6 != 0 || $8 == "failed" { next }
      { d = "KITE_" toupper($2); hit = ""
        for (i = 1; i <= ns; i++) { split(s[i], g, " ")
          if (g[1] == $1 && g[2] == d && $5 + 0 >= g[3] + 0 && $5 + 0 <= g[4] + 0) { hit = g[5]; break } }
        c++
        if (hit != $7) { printf "tables: %s %s %s N=%s: span %s, measured fastest %s\n", gpu, $1, $2, $5, hit, $7; bad++ } }
      END { if (c == 0) { print "tables: " gpu ": no row shapes"; exit 1 }
            printf "tables: %s (%s): %d row shapes, %d spans, %d mismatches\n", gpu, arr, c, ns, bad; exit bad > 0 }' \
      "$tmp/out/kite_table.c" "$tsv" || exit 1
    n=$((n + 1))
  done
  [ "$n" -ge 1 ]
}

"$case_"
