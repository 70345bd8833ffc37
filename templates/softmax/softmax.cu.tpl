@ local rowops = require "lib.rowops"
// softmax forward: y = exp(x - max) / sum(exp(x - max)), max and sum found in one online pass.
${rowops.prelude(OP, P)}

namespace {

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

// A resident row: each element's exp2 computed once, kept for the output.
__device__ __forceinline__ void softmax_resident(const raw_t (&r)[kNv], int t, int n, scratch_t &red, elem_t *y)
{
  float f[kElems];
  raw_floats(r, f);
  float f_scale;
  const float s = resident_ms(f, red, &f_scale).s, inv = kCluster > 1 ? f_scale / s : 1.f / s;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(0, j, t);
    if (i >= n) continue;
#pragma unroll
    for (int e = 0; e < kVec; ++e) f[j * kVec + e] *= inv;
    store_floats(y, i, n, &f[j * kVec]);
  }
}

struct row_t { raw_t r[kNv]; };

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) softmax_fwd(const kite_row_args a)
{
  __shared__ scratch_t red[2];
  const int n = (int)a.N;
  if constexpr (kResident) {
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t x = {};
      if (p.live) load_row(row_in(a.x, a.ldx, p), p, n, x.r, -INFINITY);
      return x;
    }, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
    }, [&](place_t p, const row_t &x, int k) {
      softmax_resident(x.r, p.t, p.live ? n : 0, red[k], row_out(a.y, a.ldy, p));   // dead rows store nothing
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
      load_again(x, c, p, m, r);
      softmax_out(r, c * kChunk, p.t, m, st, y);
    }
  });
}

}  // namespace

${rowops.launcher(VARIANT, "softmax_fwd")}
