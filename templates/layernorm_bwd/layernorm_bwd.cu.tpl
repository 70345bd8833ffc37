@ local rowops = require "lib.rowops"
// layernorm backward.  With xh = (x - mean) * rstd (mean and rstd the forward's) and g = dy * w:
// dx = rstd * (g - mean(g) - xh * mean(xh * g)) to a.y, and, when a.dw or a.db is given, the sums
// over rows dw = dy * xh and db = dy: each CTA sums its rows into its own two partial rows of
// a.partials, which sum_partials then adds up in a fixed order (no atomics: the same bytes every run).
${rowops.prelude(OP, P)}

namespace {

// A row's statistics from the forward, and the two means its dx needs.
struct stats_t { float mean, rs, cg, cxg; };

// Adds this thread's share of sum(g) and sum(xh * g) over a chunk at base to *sg and *sxg (past n:
// 0); w(j) gives w's access j.
template <typename W>
__device__ __forceinline__ void chunk_sums(const raw_t (&x)[kNv], const raw_t (&g)[kNv], W w, stats_t st,
                                           int base, int t, int n, float &sg, float &sxg)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    float fx[kVec], fg[kVec], fw[kVec];
    to_floats(x[j], i, n, 0.f, fx);
    to_floats(g[j], i, n, 0.f, fg);
    raw_floats1(w(j), fw);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const float gw = fg[e] * fw[e], xh = (fx[e] - st.mean) * st.rs;
      sg += gw;
      sxg = fmaf(xh, gw, sxg);
    }
  }
}

// dx of access j at element i; xh and dy left in fx and fg for the sums.
__device__ __forceinline__ void access_dx(const raw_t &x, const raw_t &g, const raw_t &w, stats_t st, int i,
                                          int n, elem_t *dx, float (&fx)[kVec], float (&fg)[kVec])
{
  float fw[kVec], d[kVec];
  raw_floats1(x, fx);
  raw_floats1(g, fg);
  raw_floats1(w, fw);
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    fx[e] = (fx[e] - st.mean) * st.rs;
    d[e] = st.rs * (fmaf(fg[e], fw[e], -st.cg) - fx[e] * st.cxg);
  }
  store_floats(dx, i, n, d);
}

// The row's statistics, its two sums reduced over the row together.
__device__ __forceinline__ stats_t row_stats(const kite_row_args &a, float2 (*red)[kRedSlots], float sg, float sxg,
                                             stats_t st)
{
  const float inv_n = 1.f / (float)a.N;
  const float2 s = row_sum2(make_float2(sg, sxg), red);
  st.cg = s.x * inv_n;
  st.cxg = s.y * inv_n;
  return st;
}

// The forward's mean and rstd of this row (dead rows: 0).
__device__ __forceinline__ stats_t forward_stats(const kite_row_args &a, const place_t &p)
{
  stats_t st = { 0.f, 0.f, 0.f, 0.f };
  if (p.live) st.mean = a.mean[p.row], st.rs = a.rstd[p.row];
  return st;
}

struct row_t { raw_t x[kNv], g[kNv]; };
typedef float2 red_t[kRows][kRedSlots];   // sum(g) and sum(xh * g), a slot pair per warp

// Resident variants keep w in shared memory, each thread its own accesses'
// slots (no barrier needed), as the forward does.
constexpr int kWSlots = kResident ? kNv * kCtaThreads : 1;

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) layernorm_bwd(const kite_row_args a)
{
  __shared__ red_t red[2];
  const int n = (int)a.N;
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
    const auto load = [&](place_t p) {
      row_t r = {};
      if (p.live) {
        load_row(row_in(a.x, a.ldx, p), p, n, r.x, 0.f);
        load_row<1>(row_in(a.dy, a.lddy, p), p, n, r.g, 0.f);
      }
      return r;
    };
    // Sums in registers leave none for the row through the reduction: it is
    // read out of its stage where used, twice (the stage held until the row
    // is done); elsewhere the driver's row (held) is used.
    constexpr bool kHold = kAccRegSums > 0;
    pipeline_rows<row_t, kHold>(a, load, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
      prefetch_row(row_in(a.dy, a.lddy, p), p, n);
    }, [&](place_t p, const row_t &held, int k) {
      const auto w_at = [&](int j) { return w_s[j * kCtaThreads + threadIdx.x]; };
      float sg = 0.f, sxg = 0.f;
      stats_t st = forward_stats(a, p);
      {
        const row_t r = kHold ? load(p) : held;
        chunk_sums(r.x, r.g, w_at, st, 0, p.t, n, sg, sxg);
      }
      st = row_stats(a, red[k], sg, sxg, st);
      elem_t *dx = row_out(a.y, a.ldy, p);
      const row_t r = kHold ? load(p) : held;
#pragma unroll
      for (int j = 0; j < kNv; ++j) {
        float fx[kVec], fg[kVec];
        access_dx(r.x[j], r.g[j], w_at(j), st, access_index(0, j, p.t), p.live ? n : 0, dx, fx, fg);   // dead rows: no store
        acc_add(acc, 0, j, fg, fx);
        acc_add_plain(acc, 1, j, fg);
      }
    });
    if (part) store_partial(acc, part, n);
    return;
  }
  static_assert(kResident || kRows == 1, "a streaming CTA owns its partial rows alone");
  for_row_blocks(a, [&](place_t p) {
    const elem_t *x = row_in(a.x, a.ldx, p), *g = row_in(a.dy, a.lddy, p);
    elem_t *dx = row_out(a.y, a.ldy, p);
    const int m = p.live ? n : 0;
    const bool first = p.row == (int64_t)blockIdx.x;   // the CTA's first row: its partial rows are stored, not added to
    raw_t rx[kNv], rg[kNv], rw[kNv];
    float sg = 0.f, sxg = 0.f;
    stats_t st = forward_stats(a, p);
    for (int c = 0; c * kChunk < m; ++c) {
      load_chunk(x, c * kChunk, p.t, m, rx);
      load_chunk(g, c * kChunk, p.t, m, rg);
      load_chunk(w, c * kChunk, p.t, m, rw);
      chunk_sums(rx, rg, [&](int j) { return rw[j]; }, st, c * kChunk, p.t, m, sg, sxg);
    }
    st = row_stats(a, red[0], sg, sxg, st);
    // each thread reads its elements of x and dy before it writes them: dx may be either
    for (int c = 0; c * kChunk < m; ++c) {
      load_chunk(x, c * kChunk, p.t, m, rx);
      load_chunk(g, c * kChunk, p.t, m, rg);
      load_chunk(w, c * kChunk, p.t, m, rw);
#pragma unroll
      for (int j = 0; j < kNv; ++j) {
        const int i = access_index(c * kChunk, j, p.t);
        if (i >= m) continue;
        float fx[kVec], fg[kVec];
        access_dx(rx[j], rg[j], rw[j], st, i, m, dx, fx, fg);
        if (!part) continue;
        float v[kVec];
#pragma unroll
        for (int e = 0; e < kVec; ++e) v[e] = fg[e] * fx[e];
        partial_accum(part, i, m, first, v);
        partial_accum(part + partial_ld(n), i, m, first, fg);
      }
    }
  });
}

}  // namespace

${rowops.partials_launcher(VARIANT, "layernorm_bwd")}
