"""Session 28: fewer instructions per element in rmsnorm's resident rows (ncu, H100: kite issues
2.7x Triton's warp instructions at N = 1024, 1.4x at 16384), tried on generated files before the
template.  python3 s28_rowpatch.py LEVEL FILE..., LEVEL:
  1  whole chunks (base + kChunk <= n, uniform) load and store with no per-access tests
  2  1, and the output loop without the w_offset add when w_offset is 0 (a uniform branch), and
     the mean of squares by __fdividef
  3  2, and w kept in registers (no shared-memory round trip: one row block per CTA here)"""
import re
import sys

LOAD_OLD = """{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    r[j] = i < n ? load_raw(row, i, n, fill) : splat(fill);
  }
}"""
LOAD_NEW = """{
  if (base + kChunk <= n) {   // the whole chunk is in the row: no tests
#pragma unroll
    for (int j = 0; j < kNv; ++j) r[j] = ld_stream(row + access_index(base, j, t));
    return;
  }
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    r[j] = i < n ? load_raw(row, i, n, fill) : splat(fill);
  }
}"""
OUT_OLD = """#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(0, j, p.t);
    if (i >= n) continue;
    float wf[kVec];
    raw_floats1(w_at(j), wf);
#pragma unroll
    for (int e = 0; e < kVec; ++e) f[j * kVec + e] = f[j * kVec + e] * rs * (wf[e] + a.w_offset);
    store_floats(y, i, n, &f[j * kVec]);
  }
}"""
OUT_NEW1 = """  const bool whole = kChunk <= n;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(0, j, p.t);
    if (!whole && i >= n) continue;
    float wf[kVec];
    raw_floats1(w_at(j), wf);
#pragma unroll
    for (int e = 0; e < kVec; ++e) f[j * kVec + e] = f[j * kVec + e] * rs * (wf[e] + a.w_offset);
    if (whole) *reinterpret_cast<raw_t *>(y + i) = floats_raw(&f[j * kVec]);
    else store_floats(y, i, n, &f[j * kVec]);
  }
}"""
OUT_NEW2 = """  const bool whole = kChunk <= n;
  auto out = [&](auto plain) {
#pragma unroll
    for (int j = 0; j < kNv; ++j) {
      const int i = access_index(0, j, p.t);
      if (!whole && i >= n) continue;
      float wf[kVec];
      raw_floats1(w_at(j), wf);
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        f[j * kVec + e] = f[j * kVec + e] * rs * (decltype(plain)::value ? wf[e] : wf[e] + a.w_offset);
      if (whole) *reinterpret_cast<raw_t *>(y + i) = floats_raw(&f[j * kVec]);
      else store_floats(y, i, n, &f[j * kVec]);
    }
  };
  if (a.w_offset == 0.f) out(std::true_type{});
  else out(std::false_type{});
}"""
DIV_OLD = "rsqrtf(row_sum(ss, red) / (float)a.N + a.eps)"
DIV_NEW = "rsqrtf(__fdividef(row_sum(ss, red), (float)a.N) + a.eps)"
W_OLD = "rmsnorm_resident(x.r, [&](int j) { return w_s[j * kCtaThreads + threadIdx.x]; }, p,"
W_NEW = "rmsnorm_resident(x.r, [&](int j) { return wr[j]; }, p,"
STS_OLD = "        for (int j = 0; j < kNv; ++j) w_s[j * kCtaThreads + threadIdx.x] = wr[j];\n"


def sub(s, old, new, path):
    if s.count(old) != 1:
        sys.exit("%s: %d matches of %r" % (path, s.count(old), old[:60]))
    return s.replace(old, new)


def main():
    level, files = int(sys.argv[1]), sys.argv[2:]
    for path in files:
        s = open(path).read()
        s = sub(s, LOAD_OLD, LOAD_NEW, path)
        s = sub(s, OUT_OLD, OUT_NEW1 if level == 1 else OUT_NEW2, path)
        if level >= 2:
            s = sub(s, DIV_OLD, DIV_NEW, path)
        if level >= 3:
            s = sub(s, W_OLD, W_NEW, path)
            s = sub(s, "#pragma unroll\n" + STS_OLD, "", path)
        if "#include <type_traits>" not in s:
            s = "#include <type_traits>\n" + s
        open(path, "w").write(s)


main()
