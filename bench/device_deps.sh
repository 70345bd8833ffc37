#!/usr/bin/env bash
# Prepares .deps/ for runs on the GPU machine, which reaches no package
# registry: Lua 5.4, Check and pkg-config from Debian packages, unpacked here
# (this machine's Debian), plus an env.sh that bench/device_run.sh sources.
# Then: run `bash bench/device_run.sh` there with .deps carried along.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.deps/' .git/info/exclude 2>/dev/null || echo '/.deps/' >> .git/info/exclude
rm -rf .deps && mkdir -p .deps/debs .deps/root
(cd .deps/debs && apt-get download liblua5.4-0 liblua5.4-dev check libsubunit0 libsubunit-dev \
   pkg-config libpkgconf3 pkgconf pkgconf-bin)
for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
rm -rf .deps/debs
# what the build never uses: the tree sent to the device is capped at 64 MiB
rm -rf .deps/root/usr/share/doc .deps/root/usr/share/man .deps/root/usr/lib/x86_64-linux-gnu/liblua5.4-c++*
cat > .deps/env.sh <<'ENV'
# Source on the device: Lua 5.4, Check and pkg-config unpacked from Debian packages.
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/root
export PATH="$D/usr/bin:$PATH:/usr/local/cuda/bin"
export PKG_CONFIG_SYSROOT_DIR="$D"
export PKG_CONFIG_LIBDIR="$D/usr/lib/x86_64-linux-gnu/pkgconfig:$D/usr/share/pkgconfig"
export LD_LIBRARY_PATH="$D/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CPATH="$D/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
ENV
du -sh .deps
