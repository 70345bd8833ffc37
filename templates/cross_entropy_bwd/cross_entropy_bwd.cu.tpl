@ local rowops = require "lib.rowops"
// cross-entropy backward: dx = (exp(x - lse) - onehot(target)) * dloss, row by row, from the forward's
// lse (a.lse, read) and the gradient of each row's loss (a.dloss, 1 when NULL); rows whose target is
// ignore_index get 0, rows with a target outside [0, N) NaN.  dx goes to a.y (it may be x itself).
${rowops.prelude(OP, P)}

namespace {

// What a row needs besides x: its lse, target and gradient scale (NaN: a bad target).
struct grad_t { float lse, g; int64_t tgt; bool zero; };

__device__ __forceinline__ grad_t row_grad(const kite_row_args &a, int64_t row)
{
  grad_t r;
  r.tgt = a.target[row];
  r.lse = a.lse[row];
  r.zero = r.tgt == a.ignore_index;
  const bool bad = !r.zero && (r.tgt < 0 || r.tgt >= a.N);
  r.g = bad ? __int_as_float(0x7fc00000) : a.dloss ? a.dloss[row] : 1.f;
  return r;
}

// dx for this thread's accesses of the chunk at base.
__device__ __forceinline__ void chunk_dx(const raw_t (&r)[kNv], int base, int t, int n, const grad_t &gr,
                                         elem_t *dx)
{
  const float ls = gr.lse * kLog2e;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    if (i >= n) continue;
    float f[kVec];
    raw_floats1(r[j], f);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const float p = fast_exp2(fmaf(f[e], kLog2e, -ls)) - (i + e == gr.tgt ? 1.f : 0.f);
      f[e] = gr.zero ? 0.f : p * gr.g;
    }
    store_floats(dx, i, n, f);
  }
}

struct row_t { raw_t r[kNv]; grad_t g; };

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) cross_entropy_bwd(const kite_row_args a)
{
  const int n = (int)a.N;
  if constexpr (kResident) {
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t x = {};
      if (!p.live) return x;
      load_row(row_in(a.x, a.ldx, p), p, n, x.r, 0.f);
      x.g = row_grad(a, p.row);   // every thread of the row: broadcast loads
      return x;
    }, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
    }, [&](place_t p, const row_t &x, int) {
      if (p.live) chunk_dx(x.r, 0, p.t, n, x.g, row_out(a.y, a.ldy, p));
    });
    return;
  }
  // rows, or pieces of rows (split variants): no reduction over the row
  for_row_pieces(a, [&](place_t p, int c0, int c1) {
    if (!p.live) return;
    const elem_t *x = row_in(a.x, a.ldx, p);
    elem_t *dx = row_out(a.y, a.ldy, p);
    const grad_t g = row_grad(a, p.row);
    raw_t r[kNv];
    // one pass; each thread reads its accesses before it writes them, so dx may be x
    for (int c = c0; c < c1; ++c) {
      load_chunk(x, c * kChunk, p.t, n, r);
      chunk_dx(r, c * kChunk, p.t, n, g, dx);
    }
  });
}

}  // namespace

${rowops.launcher(VARIANT, "cross_entropy_bwd")}
