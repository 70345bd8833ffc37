@ local rowops = require "lib.rowops"
// rmsnorm backward.  With xh = x * rstd (rstd the forward's) and g = dy * (w + w_offset):
// dx = rstd * (g - xh * mean(xh * g)) to a.y, and, when a.dw is given, dw = the sum over rows of
// dy * xh: each CTA sums its rows into its own partial row of a.partials, which sum_partials then
// adds up in a fixed order (no atomics: the same bytes every run).
${rowops.prelude(OP, P)}

namespace {

// w's access j as floats, offset (Gemma's w + 1).
__device__ __forceinline__ void weight_floats(const raw_t &w, float off, float (&f)[kVec])
{
  raw_floats1(w, f);
#pragma unroll
  for (int e = 0; e < kVec; ++e) f[e] += off;
}

// sum over this thread's accesses of a chunk at base of x * (w + off) * dy (past n: 0);
// w(j) gives w's access j.
template <typename W>
__device__ __forceinline__ float chunk_dot(const raw_t (&x)[kNv], const raw_t (&g)[kNv], W w, float off, int base,
                                           int t, int n)
{
  float d = 0.f;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    float fx[kVec], fg[kVec], fw[kVec];
    to_floats(x[j], i, n, 0.f, fx);
    to_floats(g[j], i, n, 0.f, fg);
    weight_floats(w(j), off, fw);
#pragma unroll
    for (int e = 0; e < kVec; ++e) d = fmaf(fx[e] * fw[e], fg[e], d);
  }
  return d;
}

// dx of access j at element i, given rstd rs and c = mean(xh * g); xh and dy
// left in fx and fg for dw.
__device__ __forceinline__ void access_dx(const raw_t &x, const raw_t &g, const raw_t &w, float off, float rs,
                                          float c, int i, int n, elem_t *dx, float (&fx)[kVec], float (&fg)[kVec])
{
  float fw[kVec], d[kVec];
  raw_floats1(x, fx);
  raw_floats1(g, fg);
  weight_floats(w, off, fw);
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    fx[e] *= rs;
    d[e] = rs * fmaf(-fx[e], c, fg[e] * fw[e]);
  }
  store_floats(dx, i, n, d);
}

struct row_t { raw_t x[kNv], g[kNv]; };

// Resident variants keep w in shared memory, each thread its own accesses'
// slots (no barrier needed), as the forward does.
constexpr int kWSlots = kResident ? kNv * kCtaThreads : 1;

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) rmsnorm_bwd(const kite_row_args a)
{
  __shared__ float red[2][kRows][kRedSlots];
  const int n = (int)a.N;
  const float off = a.w_offset;
  const elem_t *w = static_cast<const elem_t *>(a.w);
  float *part = cta_partials(a, n);
  if constexpr (kResident) {
    __shared__ raw_t w_s[kWSlots];
    raw_t wr[kNv];
    load_chunk(w, 0, lane_in_row(), n, wr);
#pragma unroll
    for (int j = 0; j < kNv; ++j) w_s[j * kCtaThreads + threadIdx.x] = wr[j];
    acc_t acc;   // the sums over rows kept in registers (kAccRegSums: mostly none)
    acc_zero_all(acc);
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t r = {};
      if (p.live) {
        load_row(row_in(a.x, a.ldx, p), p, n, r.x, 0.f);
        load_row<1>(row_in(a.dy, a.lddy, p), p, n, r.g, 0.f);
      }
      return r;
    }, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
      prefetch_row(row_in(a.dy, a.lddy, p), p, n);
    }, [&](place_t p, const row_t &r, int k) {
      const float rs = p.live ? a.rstd[p.row] : 0.f;
      const auto w_at = [&](int j) { return w_s[j * kCtaThreads + threadIdx.x]; };
      const float c = row_sum(chunk_dot(r.x, r.g, w_at, off, 0, p.t, n), red[k]) * rs / (float)n;
      elem_t *dx = row_out(a.y, a.ldy, p);
#pragma unroll
      for (int j = 0; j < kNv; ++j) {
        const int i = access_index(0, j, p.t);
        float fx[kVec], fg[kVec];
        access_dx(r.x[j], r.g[j], w_at(j), off, rs, c, i, p.live ? n : 0, dx, fx, fg);   // dead rows: no store
        acc_add(acc, 0, j, fg, fx);
      }
    });
    if (part) store_partial(acc, part, n);
    return;
  }
  static_assert(kResident || kRows == 1, "a streaming CTA owns its partial row alone");
  for_row_blocks(a, [&](place_t p) {
    const elem_t *x = row_in(a.x, a.ldx, p), *g = row_in(a.dy, a.lddy, p);
    elem_t *dx = row_out(a.y, a.ldy, p);
    const int m = p.live ? n : 0;
    const bool first = p.row == (int64_t)blockIdx.x;   // the CTA's first row: its partial row is stored, not added to
    const float rs = p.live ? a.rstd[p.row] : 0.f;
    raw_t rx[kNv], rg[kNv], rw[kNv];
    float d = 0.f;
    for (int c = 0; c * kChunk < m; ++c) {
      load_chunk(x, c * kChunk, p.t, m, rx);
      load_chunk(g, c * kChunk, p.t, m, rg);
      load_chunk(w, c * kChunk, p.t, m, rw);
      d += chunk_dot(rx, rg, [&](int j) { return rw[j]; }, off, c * kChunk, p.t, m);
    }
    const float cm = row_sum(d, red[0]) * rs / (float)n;
    // each thread reads its elements of x and dy before it writes them: dx may be either
    for (int c = 0; c * kChunk < m; ++c) {
      float pv[kNv][kVec];   // the partial sums, loaded beside the row (not after dx's stores)
#pragma unroll
      for (int j = 0; j < kNv; ++j) {
        if (part && !first) partial_load(part, access_index(c * kChunk, j, p.t), m, pv[j]);
        else
#pragma unroll
          for (int e = 0; e < kVec; ++e) pv[j][e] = 0.f;
      }
      load_chunk(x, c * kChunk, p.t, m, rx);
      load_chunk(g, c * kChunk, p.t, m, rg);
      load_chunk(w, c * kChunk, p.t, m, rw);
#pragma unroll
      for (int j = 0; j < kNv; ++j) {
        const int i = access_index(c * kChunk, j, p.t);
        if (i >= m) continue;
        float fx[kVec], fg[kVec];
        access_dx(rx[j], rg[j], rw[j], off, rs, cm, i, m, dx, fx, fg);
        if (!part) continue;
#pragma unroll
        for (int e = 0; e < kVec; ++e) pv[j][e] = fmaf(fg[e], fx[e], pv[j][e]);
        partial_store(part, i, m, pv[j]);
      }
    }
  });
}

}  // namespace

${rowops.partials_launcher(VARIANT, "rmsnorm_bwd")}
