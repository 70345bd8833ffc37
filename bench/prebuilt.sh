# Kernel objects built off the GPU machine, carried there so that a cold call
# links instead of compiling ~1200 kernels (~200 s of device time a call).
# Sourced by bench/device_run.sh (prebuilt_unpack) and run as a script here:
#   bash bench/prebuilt.sh [DIR...]   packs the build/obj of each DIR (default:
#   this tree; a DIR may be a clean clone or a worktree of another commit, e.g.
#   main and a branch) into .prebuilt/, every object under its source's md5, so
#   that one pack serves each of those trees.  Their headers and flags
#   (prebuilt_hash) must be this tree's.
# Then carry [".deps", ".prebuilt"] with `run`.

# What every kernel object is made of besides its own source: the headers the
# generated .cu files include (runtime/'s and the shared helpers of
# out/include/) and the flags (kite.mk).  Each object is then keyed by its
# source's md5 (.prebuilt/objs.tar.xz holds <md5>.o and its ptxas log
# <md5>.o.log), so that a template change costs the device only the variants
# it changed.
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

# On the GPU machine, before make: into a build/ that has none, the object of
# every kernel source whose md5 the pack holds (make builds the rest), made
# newer than its source.
prebuilt_unpack() {
  [ -f .prebuilt/objs.tar.xz ] && [ -f .prebuilt/sums ] || return 0
  if [ -d build/obj ]; then echo "prebuilt: build/obj is there already, not unpacked"; return 0; fi
  if [ "$(cat .prebuilt/hash)" != "$(prebuilt_hash)" ]; then
    echo "prebuilt: objects of other headers or flags ($(cat .prebuilt/commit)), not used"; return 0
  fi
  local pack=build/.prebuilt_objs sum src o dir= n=0 left=0
  rm -rf "$pack" && mkdir -p "$pack" && prebuilt_xz_cat .prebuilt/objs.tar.xz | tar xf - -C "$pack" || return 1
  while read -r sum src; do   # (sorted by path: one mkdir per op)
    o=build/obj/${src#out/}; o=${o%.cu}.o
    if [ -f "$pack/$sum.o" ]; then
      [ "${o%/*}" = "$dir" ] || { dir=${o%/*}; mkdir -p "$dir"; }
      mv "$pack/$sum.o" "$o" && { [ ! -f "$pack/$sum.o.log" ] || mv "$pack/$sum.o.log" "$o.log"; }
      n=$((n + 1))
    else
      left=$((left + 1))
    fi
  done < <(prebuilt_sums)
  rm -rf "$pack"
  find build/obj -type f -exec touch {} + &&
    echo "prebuilt: $n kernel objects of $(cat .prebuilt/commit) unpacked, $left of changed sources left to make"
}

# Here: DIR's objects copied into $2 under their sources' md5s (DIR checked
# first), its "md5  source" lines on stdout.
prebuilt_collect() {
  local src=$1 dst=$2 sum f o
  [ "$(prebuilt_hash "$src")" = "$(prebuilt_hash)" ] || { echo "prebuilt.sh: $src's headers or flags differ from this tree's" >&2; return 1; }
  while read -r sum f; do
    o=$src/build/obj/${f#out/}; o=${o%.cu}.o
    [ -f "$o" ] || { echo "prebuilt.sh: $o missing: build $src first" >&2; return 1; }
    cp "$o" "$dst/$sum.o"; [ ! -f "$o.log" ] || cp "$o.log" "$dst/$sum.o.log"
    echo "$sum  $f"
  done < <(prebuilt_sums "$src")
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  [ $# -gt 0 ] || set -- .
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  mkdir "$tmp/objs"
  for src in "$@"; do prebuilt_collect "$src" "$tmp/objs" >>"$tmp/sums"; done
  excl=$(git rev-parse --git-path info/exclude)   # a worktree's .git is a file
  mkdir -p "$(dirname "$excl")"
  grep -qx '/.prebuilt/' "$excl" 2>/dev/null || echo '/.prebuilt/' >> "$excl"
  rm -rf .prebuilt && mkdir .prebuilt
  # objects and ptxas logs only, not nvcc's dependency lists (*.d): they name this
  # machine's CUDA headers, and a path missing on the GPU machine would have make
  # rebuild every object there
  (cd "$tmp/objs" && find . -type f | LC_ALL=C sort | tar cf - -T - | xz -9 -T0) >.prebuilt/objs.tar.xz
  prebuilt_hash >.prebuilt/hash
  LC_ALL=C sort -u "$tmp/sums" >.prebuilt/sums
  for src in "$@"; do git -C "$src" rev-parse --short HEAD; done | paste -sd' ' >.prebuilt/commit
  echo "prebuilt.sh: $(du -h .prebuilt/objs.tar.xz | cut -f1) in .prebuilt/objs.tar.xz," \
       "$(find "$tmp/objs" -name '*.o' | wc -l) objects (commits $(cat .prebuilt/commit))"
fi
