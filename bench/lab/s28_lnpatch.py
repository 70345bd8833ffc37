"""Session 28: layernorm's resident rows with fewer instructions per element, tried on generated
files before the template (as s28_rowpatch.py for rmsnorm).  python3 s28_lnpatch.py LEVEL FILE...:
  1  whole chunks (kChunk <= n, uniform) load x with no per-access tests
  2  1, and the statistics' divisions by __fdividef, span_elems a constant for whole chunks
  3  2, and y stored with no per-access tests for whole chunks (the output loop twice)"""
import sys

WHOLE = """// A resident row's chunk from global memory: a whole one with no test per
// access, else element-wise at the tail (load_chunk).
__device__ __forceinline__ void load_whole(const elem_t *row, int t, int n, raw_t (&r)[kNv])
{
  if (kChunk <= n) {
#pragma unroll
    for (int j = 0; j < kNv; ++j) r[j] = ld_stream(row + access_index(0, j, t));
  } else {
    load_chunk(row, 0, t, n, r);
  }
}

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) layernorm_fwd"""
SUBS1 = [
    ("__global__ void __launch_bounds__(kCtaThreads, kMinCtas) layernorm_fwd", WHOLE),
    ("      if (p.live) load_row(row_in(a.x, a.ldx, p), p, n, r.x, 0.f);\n",
     "      if (p.live) {\n        if constexpr (kStaged) load_row(row_in(a.x, a.ldx, p), p, n, r.x, 0.f);\n"
     "        else load_whole(row_in(a.x, a.ldx, p), p.t, n, r.x);\n      }\n"),
]
SUBS3 = [   # access_y: a whole flag; y stored with no test
    ("                                         int i, int n, elem_t *y)\n{\n  float d[kVec], fw[kVec], fb[kVec];",
     "                                         int i, int n, elem_t *y, bool whole = false)\n{\n"
     "  float d[kVec], fw[kVec], fb[kVec];"),
    ("  for (int e = 0; e < kVec; ++e) d[e] = fmaf(kCluster > 1 ? fmaf(d[e], rs, c) : d[e] * rs, fw[e], fb[e]);\n"
     "  store_floats(y, i, n, d);",
     "  for (int e = 0; e < kVec; ++e) d[e] = fmaf(kCluster > 1 ? fmaf(d[e], rs, c) : d[e] * rs, fw[e], fb[e]);\n"
     "  if (whole) *reinterpret_cast<raw_t *>(y + i) = floats_raw(d);\n  else store_floats(y, i, n, d);"),
    ("      const int lim = p.live ? n : 0;   // dead rows store nothing\n#pragma unroll\n"
     "      for (int j = 0; j < kNv; ++j)\n"
     "        access_y(r.x[j], m, w_s[j * kCtaThreads + threadIdx.x], b_s[j * kCtaThreads + threadIdx.x], st.rs, c,\n"
     "                 access_index(0, j, p.t), lim, y);\n",
     "      const int lim = p.live ? n : 0;   // dead rows store nothing\n"
     "      auto out = [&](auto whole) {\n#pragma unroll\n"
     "        for (int j = 0; j < kNv; ++j)\n"
     "          access_y(r.x[j], m, w_s[j * kCtaThreads + threadIdx.x], b_s[j * kCtaThreads + threadIdx.x], st.rs, c,\n"
     "                   access_index(0, j, p.t), lim, y, decltype(whole)::value);\n      };\n"
     "      if (kChunk <= lim) out(std::true_type{});\n      else out(std::false_type{});\n"),
]
SUBS2 = [
    ("  int c = 0;\n#pragma unroll\n  for (int j = 0; j < kNv; ++j) c += min(threads * kVec, max(0, n - access_index(0, j, t0)));",
     "  if (kChunk <= n) return kNv * threads * kVec;   // every access of the group is whole\n"
     "  int c = 0;\n#pragma unroll\n  for (int j = 0; j < kNv; ++j) c += min(threads * kVec, max(0, n - access_index(0, j, t0)));"),
    ("  return { m.x / (float)n, rsqrtf(m.y / (float)n + eps) };",
     "  return { __fdividef(m.x, (float)n), rsqrtf(__fdividef(m.y, (float)n) + eps) };"),
    ("resident_squares(x, nw > 0.f ? s / nw : 0.f, t, n)", "resident_squares(x, nw > 0.f ? __fdividef(s, nw) : 0.f, t, n)"),
    ("  const float d = np > 0.f ? v.x / np - s / n : 0.f;", "  const float d = np > 0.f ? __fdividef(v.x, np) - __fdividef(s, n) : 0.f;"),
]
CLUSTER = ("  *mc = nc > 0.f ? cm.x / nc : 0.f;", "  *mc = nc > 0.f ? __fdividef(cm.x, nc) : 0.f;")


def main():
    level, files = int(sys.argv[1]), sys.argv[2:]
    for path in files:
        s = open(path).read()
        subs = SUBS1 + (SUBS2 + [CLUSTER] if level >= 2 else []) + (SUBS3 if level >= 3 else [])
        for old, new in subs:
            if s.count(old) != 1:
                sys.exit("%s: %d matches of %r" % (path, s.count(old), old[:70]))
            s = s.replace(old, new)
        open(path, "w").write(s)


main()
