@ local rowops = require "lib.rowops"
// softmax backward: dx = y * (dy - sum(y * dy)), from the forward's output y (a.x) and the incoming
// gradient dy (a.dy); dx goes to a.y.
${rowops.prelude(OP, P)}

namespace {

// sum over this thread's accesses of a chunk of y * dy.  No mask past n: every
// load leaves zeros there (load_raw, load_chunk, load_staged; dead rows load
// nothing and stay {}), and without the mask a thread holds fewer registers.
__device__ __forceinline__ float chunk_dot(const raw_t (&y)[kNv], const raw_t (&g)[kNv])
{
  float d = 0.f;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    float fy[kVec], fg[kVec];
    raw_floats1(y[j], fy);
    raw_floats1(g[j], fg);
#pragma unroll
    for (int e = 0; e < kVec; ++e) d = fmaf(fy[e], fg[e], d);
  }
  return d;
}

// dx for this thread's accesses of the chunk at base, given the row's dot.
__device__ __forceinline__ void chunk_dx(const raw_t (&y)[kNv], const raw_t (&g)[kNv], int base, int t, int n,
                                         float dot, elem_t *dx)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    if (i >= n) continue;
    float fy[kVec], fg[kVec];
    raw_floats1(y[j], fy);
    raw_floats1(g[j], fg);
#pragma unroll
    for (int e = 0; e < kVec; ++e) fy[e] *= fg[e] - dot;
    store_floats(dx, i, n, fy);
  }
}

struct row_t { raw_t y[kNv], g[kNv]; };

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) softmax_bwd(const kite_row_args a)
{
  __shared__ float red[2][kRows][kRedSlots];
  const int n = (int)a.N;
  if constexpr (kResident) {
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t r = {};
      if (p.live) {
        load_row(row_in(a.x, a.ldx, p), p, n, r.y, 0.f);
        load_row<1>(row_in(a.dy, a.lddy, p), p, n, r.g, 0.f);
      }
      return r;
    }, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
      prefetch_row(row_in(a.dy, a.lddy, p), p, n);
    }, [&](place_t p, const row_t &r, int k) {
      const int m = p.live ? n : 0;   // dead rows store nothing
      const float dot = row_sum(chunk_dot(r.y, r.g), red[k]);
      chunk_dx(r.y, r.g, 0, p.t, m, dot, row_out(a.y, a.ldy, p));
    });
    return;
  }
  for_row_blocks(a, [&](place_t p) {
    const elem_t *y = row_in(a.x, a.ldx, p), *g = row_in(a.dy, a.lddy, p);
    elem_t *dx = row_out(a.y, a.ldy, p);
    const int m = p.live ? n : 0;
    raw_t ry[kNv] = {}, rg[kNv] = {};
    float dot = 0.f;
    for (int c = 0; c * kChunk < m; ++c) {
      load_chunk(y, c * kChunk, p.t, m, ry);
      load_chunk(g, c * kChunk, p.t, m, rg);
      dot += chunk_dot(ry, rg);
    }
    dot = row_sum(dot, red[0]);
    // each thread reads its elements of y and dy before it writes them: dx may be dy or y itself
    for (int c = 0; c * kChunk < m; ++c) {
      load_chunk(y, c * kChunk, p.t, m, ry);
      load_chunk(g, c * kChunk, p.t, m, rg);
      chunk_dx(ry, rg, c * kChunk, p.t, m, dot, dx);
    }
  });
}

}  // namespace

${rowops.launcher(VARIANT, "softmax_bwd")}
