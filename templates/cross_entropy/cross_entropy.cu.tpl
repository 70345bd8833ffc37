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

// loss for one row: 0 when ignored, NaN when the target is out of range.
__device__ __forceinline__ float row_loss(const kite_row_args &a, const elem_t *x, int64_t row,
                                          float lse)
{
  const int64_t tgt = a.target[row];
  if (tgt == a.ignore_index) return 0.f;
  if (tgt < 0 || tgt >= a.N) return __int_as_float(0x7fc00000);
  return lse - to_f32(x[tgt]);
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
    for (int c = 0; c * kChunk < m; ++c) {
      load_chunk(x, c * kChunk, p.t, m, r);
      st = chunk_stats(st, r, c * kChunk, p.t, m);
    }
    st = row_ms(st, red);
    if (!p.live || p.t != 0) return;
    const float lse = st.m + logf(st.s);
    a.loss[p.row] = row_loss(a, x, p.row, lse);
    if (a.lse) a.lse[p.row] = lse;
  });
}

}  // namespace

${rowops.launcher(VARIANT, "cross_entropy_fwd")}
