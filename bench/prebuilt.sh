# Kernel objects built off the GPU machine, carried there so that a cold call
# links instead of compiling ~1200 kernels (~200 s of device time a call).
# Sourced by bench/device_run.sh (prebuilt_unpack) and run as a script here:
#   bash bench/prebuilt.sh [DIR]   packs DIR's build/obj (default: this tree's;
#   DIR may be a clean clone of the same commit, as the CI emulation's) into
#   .prebuilt/, after checking that DIR's kernel sources are this tree's.
# Then carry [".deps", ".prebuilt"] with `run`.

# What every kernel object is made of besides its own source: the headers the
# generated .cu files include (runtime/'s and the shared helpers of
# out/include/) and the flags (kite.mk).  Each object is then
# keyed by its source's md5 (.prebuilt/sums), so that a template change costs
# the device only the variants it changed.
prebuilt_hash() {
  (cd "${1:-.}" && md5sum runtime/kite.h runtime/kite_launch.h runtime/kite.mk out/include/*.cuh) | md5sum | cut -c1-32
}
prebuilt_sums() {
  (cd "${1:-.}" && find out -mindepth 2 -name '*.cu' -print0 | LC_ALL=C sort -z | xargs -0 md5sum)
}

# xz, not gzip: the variants' objects share most of their bytes, which only a
# long window finds (11 MB gzipped, 1.8 MB in xz; the tree sent is capped at
# 64 MiB).  Python's lzma where the machine has no xz.
prebuilt_xz_cat() {
  if command -v xz >/dev/null; then xz -dc "$1"
  else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; fi
}

# On the GPU machine, before make: the carried objects unpacked into a build/
# that has none, those whose source changed since removed (make builds them),
# the rest made newer than their sources.
prebuilt_unpack() {
  [ -f .prebuilt/objs.tar.xz ] && [ -f .prebuilt/sums ] || return 0
  if [ -d build/obj ]; then echo "prebuilt: build/obj is there already, not unpacked"; return 0; fi
  if [ "$(cat .prebuilt/hash)" != "$(prebuilt_hash)" ]; then
    echo "prebuilt: objects of other headers or flags ($(cat .prebuilt/commit)), not used"; return 0
  fi
  mkdir -p build && prebuilt_xz_cat .prebuilt/objs.tar.xz | tar xf - -C build || return 1
  local stale
  stale=$(LC_ALL=C comm -23 <(LC_ALL=C sort .prebuilt/sums) <(prebuilt_sums | LC_ALL=C sort) |
          sed 's|^[0-9a-f]*  out/\(.*\)\.cu$|build/obj/\1.o|')
  [ -z "$stale" ] || printf '%s\n' $stale | xargs rm -f
  find build/obj -type f -exec touch {} + &&
    echo "prebuilt: $(find build/obj -name '*.o' | wc -l) kernel objects of $(cat .prebuilt/commit) unpacked," \
         "$(printf '%s' "$stale" | grep -c .) of changed sources left to make"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  src=${1:-.}
  [ "$(prebuilt_hash "$src")" = "$(prebuilt_hash)" ] || { echo "prebuilt.sh: $src's headers or flags differ from this tree's" >&2; exit 1; }
  [ "$(prebuilt_sums "$src")" = "$(prebuilt_sums)" ] || { echo "prebuilt.sh: $src's kernel sources differ from this tree's" >&2; exit 1; }
  missing=$(cd "$src" && find out -mindepth 2 -name '*.cu' | sed 's|^out/\(.*\)\.cu$|build/obj/\1.o|' |
            while read -r o; do [ -f "$o" ] || echo "$o"; done | wc -l)
  [ "$missing" = 0 ] || { echo "prebuilt.sh: $missing kernel objects missing in $src/build/obj: build first" >&2; exit 1; }
  excl=$(git rev-parse --git-path info/exclude)   # a worktree's .git is a file
  mkdir -p "$(dirname "$excl")"
  grep -qx '/.prebuilt/' "$excl" 2>/dev/null || echo '/.prebuilt/' >> "$excl"
  rm -rf .prebuilt && mkdir .prebuilt
  # not nvcc's dependency lists (*.d): they name this machine's CUDA headers, and a
  # path missing on the GPU machine would have make rebuild every object there
  (cd "$src/build" && find obj -mindepth 2 -type f ! -path 'obj/runtime/*' ! -name '*.d' | LC_ALL=C sort |
     tar cf - -T - | xz -9 -T0) >.prebuilt/objs.tar.xz
  prebuilt_hash >.prebuilt/hash
  prebuilt_sums >.prebuilt/sums
  git rev-parse --short HEAD >.prebuilt/commit
  echo "prebuilt.sh: $(du -h .prebuilt/objs.tar.xz | cut -f1) in .prebuilt/objs.tar.xz (commit $(cat .prebuilt/commit))"
fi
