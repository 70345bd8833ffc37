@ local rowops = require "lib.rowops"
// cross-entropy forward: loss = logsumexp(x) - x[target], the row read once (online max and sum).
${rowops.prelude(OP, P)}

namespace {

__device__ __forceinline__ ms_t chunk_stats(ms_t st, const raw_t (&r)[kNv], int base, int t, int n)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    float f[kVec];
    to_floats(r[j], access_index(base, j, t), n, -INFINITY, f);
    st = ms_add(st, f);
  }
  return st;
}

// The row's target logit, fetched by the row's first thread while the row
// itself streams in: 0 when ignored, NaN when the target is out of range.
struct target_t { bool ignored; float logit; };

__device__ __forceinline__ target_t fetch_target(const kite_row_args &a, const elem_t *x, int64_t row)
{
  const int64_t tgt = a.target[row];
  if (tgt == a.ignore_index) return { true, 0.f };
  if (tgt < 0 || tgt >= a.N) return { false, __int_as_float(0x7fc00000) };
  return { false, to_f32(x[tgt]) };
}

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) cross_entropy_fwd(const kite_row_args a)
{
  __shared__ ms_t red[kRows][kWarps];
  const int n = (int)a.N;
  for_row_blocks(a.M, [&](place_t p) {
    const elem_t *x = static_cast<const elem_t *>(a.x) + (p.live ? p.row * a.ldx : 0);
    const int m = p.live ? n : 0;
    raw_t r[kNv] = {};
    ms_t st = { -INFINITY, 0.f };
    const bool lead = p.live && p.t == 0;
    target_t tg = { true, 0.f };
    for (int c = 0; c * kChunk < m; ++c) {
      load_chunk(x, c * kChunk, p.t, m, r);
      if (c == 0 && lead) tg = fetch_target(a, x, p.row);
      st = chunk_stats(st, r, c * kChunk, p.t, m);
    }
    st = row_ms(st, red);
    if (!lead) return;
    const float lse = st.m + logf(st.s);
    a.loss[p.row] = tg.ignored ? 0.f : lse - tg.logit;
    if (a.lse) a.lse[p.row] = lse;
  });
}

}  // namespace

${rowops.launcher(VARIANT, "cross_entropy_fwd")}
