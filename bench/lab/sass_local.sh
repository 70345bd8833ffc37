# SASS of a generated kernel here, without a GPU machine (session 31): this machine's nvcc 13 has no
# cuobjdump / nvdisasm, and Debian's (non-free nvidia-cuda-toolkit, CUDA 11.8) reads only the
# pre-12.8 cubin header, so the cubin's header is rewritten to that form (OS/ABI 0x33, ABI 7,
# e_flags sm_90 / virtual sm_90 / 64-bit / unified textures) before nvdisasm reads it.  Row kernels
# (no wgmma) decode; sm_90a-only instructions may not.  The device's cuobjdump stays the reference.
#   bash bench/lab/sass_local.sh out/layernorm/X.cu [more.cu ...]   -> /tmp/sass/X.sass, and a count
#   of the instructions by opcode (static counts: a loop's body once)
set -e
T=/tmp/cudatk; ND=$T/x/usr/bin/nvdisasm
if [ ! -x $ND ]; then   # Debian's non-free component, as this machine reaches Debian's mirror
  [ -f /etc/apt/sources.list.d/nonfree-tools.sources ] || printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    > /etc/apt/sources.list.d/nonfree-tools.sources
  apt-get update -qq; mkdir -p $T; (cd $T && apt-get download -qq nvidia-cuda-toolkit 2>/dev/null && dpkg-deb -x nvidia-cuda-toolkit_*.deb x)
fi
mkdir -p /tmp/sass
for cu in "$@"; do
  v=$(basename "$cu" .cu)
  /usr/local/cuda/bin/nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I runtime -I out -cubin "$cu" -o /tmp/sass/$v.cubin
  python3 - /tmp/sass/$v.cubin <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[7], b[8] = 0x33, 7                     # OS/ABI CUDA, ABI version 7
struct.pack_into('<I', b, 48, 0x005a055a)  # EF_CUDA_SM90 | VIRTUAL_SM(90) | 64BIT_ADDRESS | TEXMODE_UNIFIED
open(sys.argv[1], 'wb').write(b)
PY
  $ND /tmp/sass/$v.cubin > /tmp/sass/$v.sass
  echo "$v: $(grep -cE '^\s+/\*[0-9a-f]{4,}\*/ +[@A-Z]' /tmp/sass/$v.sass) instructions"
  grep -E '^\s+/\*[0-9a-f]{4,}\*/ +[@A-Z]' /tmp/sass/$v.sass | sed -E 's/^\s+\/\*[0-9a-f]+\*\/ +(@!?U?P[0-9T] +)?//; s/[ .;].*//' |
    sort | uniq -c | sort -rn | head -${SASS_TOP:-12} | tr '\n' ' '; echo
done
