@ local rowops = require "lib.rowops"
// softmax forward: y = exp(x - max) / sum(exp(x - max)), max and sum found in one online pass.
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

__device__ __forceinline__ void softmax_out(const raw_t (&r)[kNv], int base, int t, int n, ms_t st,
                                            elem_t *y)
{
  const float ms = st.m * kLog2e, inv = 1.f / st.s;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    if (i >= n) continue;
    float f[kVec];
    to_floats(r[j], i, n, 0.f, f);
#pragma unroll
    for (int e = 0; e < kVec; ++e) f[e] = fast_exp2(fmaf(f[e], kLog2e, -ms)) * inv;
    store_floats(y, i, n, f);
  }
}

struct row_t { raw_t r[kNv]; };

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) softmax_fwd(const kite_row_args a)
{
  __shared__ ms_t red[2][kRows][kWarps];
  const int n = (int)a.N;
  if constexpr (kResident) {
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t x = {};
      if (p.live) load_row(row_in(a.x, a.ldx, p), p, n, x.r);
      return x;
    }, [&](place_t p, const row_t &x, int k) {
      const int m = p.live ? n : 0;   // dead rows touch nothing
      const ms_t st = row_ms(chunk_stats({ -INFINITY, 0.f }, x.r, 0, p.t, m), red[k]);
      softmax_out(x.r, 0, p.t, m, st, row_out(a.y, a.ldy, p));
    });
    return;
  }
  for_row_blocks(a, [&](place_t p) {
    const elem_t *x = row_in(a.x, a.ldx, p);
    elem_t *y = row_out(a.y, a.ldy, p);
    const int m = p.live ? n : 0;
    raw_t r[kNv] = {};
    ms_t st = { -INFINITY, 0.f };
    for (int c = 0; c * kChunk < m; ++c) {
      load_first(x, c, p, m, r);
      st = chunk_stats(st, r, c * kChunk, p.t, m);
    }
    st = row_ms(st, red[0]);
    for (int c = 0; c * kChunk < m; ++c) {
      load_again(x, c, p.t, m, r);
      softmax_out(r, c * kChunk, p.t, m, st, y);
    }
  });
}

}  // namespace

${rowops.launcher(VARIANT, "softmax_fwd")}
