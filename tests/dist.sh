#!/usr/bin/env bash
# The uses of kite beyond its own tree, one case per call (test_dist.c runs them):
#   committed   a fresh kite-gen writes exactly the committed out/
#   compiled    every manifest variant was compiled by nvcc for sm_90a, no spills
#   vendor      out/ + runtime/ alone build a library and a consumer links to it
#   extend      a new template folder shows up in out/, manifest, table, and runs
# Usage: tests/dist.sh CASE TMPDIR   (run from the repository root)
set -eu
case_=$1 tmp=$2
root=$(pwd)
gen=$root/build/kite-gen
fix=$root/tests/fixtures
cuobjdump=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/cuobjdump

manifest_count() { tail -n +2 "$1" | wc -l; }

# (with make gen's measured inputs: bench/tuned/$KITE_GPU.tsv and .times.tsv, KITE_GPU default h200)
committed() {
  local tuned=bench/tuned/${KITE_GPU:-h200} args=()
  [ -f "$tuned.tsv" ] && args+=(--tuned "$tuned.tsv")
  [ -f "$tuned.times.tsv" ] && args+=(--times "$tuned.times.tsv")
  "$gen" -q -t templates -o "$tmp/out" "${args[@]}"
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
# names a header the copy's runtime/ holds, and one variant of each op and
# dtype is compiled there from scratch.  The others take the objects that
# `make` compiled from the same bytes (the copy was just made) with the same
# kite.mk rule: compiling all of them again took 2400 s of CI's two cores
# (and overflowed Check's duration field).  KITE_VENDOR_FULL=1 compiles
# every variant in the copy.
seed_objects() {
  local kite=$1 hdr name op dtype fresh=0 seeded=0
  local -A first=()
  for hdr in $(grep -rho '#include "[^"]*"' "$kite/out" "$kite/runtime" | cut -d'"' -f2 | sort -u); do
    [ -f "$kite/runtime/$hdr" ] || { echo "vendor: $hdr is not in the copy's runtime/"; exit 1; }
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

"$case_"
