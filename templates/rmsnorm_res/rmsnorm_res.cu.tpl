@ local rowops = require "lib.rowops"
// rmsnorm over a residual stream: h = x + res rounded to the dtype (what an add in the dtype
// stores), written to a.h when given; y = h * rsqrt(mean(h^2) + eps) * (w + w_offset) to a.y,
// rstd to a.rstd when given.  The norm is of h as stored, so y matches a separate add then rmsnorm.
${rowops.prelude(OP, P)}

namespace {

// h's access from x's and res's, rounded to the dtype.
__device__ __forceinline__ raw_t residual_sum(const raw_t &x, const raw_t &r)
{
  float fx[kVec], fr[kVec];
  raw_floats1(x, fx);
  raw_floats1(r, fr);
#pragma unroll
  for (int e = 0; e < kVec; ++e) fx[e] += fr[e];
  return floats_raw(fx);
}

// sum of squares of h's accesses of a chunk (past n: 0 in the data).
__device__ __forceinline__ float chunk_squares(const raw_t (&h)[kNv])
{
  float ss = 0.f;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    float f[kVec];
    raw_floats1(h[j], f);
#pragma unroll
    for (int e = 0; e < kVec; ++e) ss = fmaf(f[e], f[e], ss);
  }
  return ss;
}

// y of h's access j at element i, with rstd rs and w's access.
__device__ __forceinline__ void access_y(const raw_t &h, const raw_t &w, float off, float rs, int i, int n, elem_t *y)
{
  float fh[kVec], fw[kVec];
  raw_floats1(h, fh);
  raw_floats1(w, fw);
#pragma unroll
  for (int e = 0; e < kVec; ++e) fh[e] = fh[e] * rs * (fw[e] + off);
  store_floats(y, i, n, fh);
}

// h's accesses of a chunk stored (elements from n on are not written).
__device__ __forceinline__ void store_h(const raw_t (&h)[kNv], int base, int t, int n, elem_t *out)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    if (i >= n) continue;
    float f[kVec];
    raw_floats1(h[j], f);
    store_floats(out, i, n, f);
  }
}

// h's accesses of a chunk read back from L2 (ld.global.cg): this kernel wrote
// them, and when h is x the read-only path may still hold x's old bytes.
__device__ __forceinline__ void load_written(const elem_t *row, int base, int t, int n, raw_t (&r)[kNv])
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    r[j] = splat(0.f);
    if (i + kVec <= n && sizeof(raw_t) == 16) {
      const uint4 v = __ldcg(reinterpret_cast<const uint4 *>(row + i));
      memcpy(&r[j], &v, sizeof v);
      continue;
    }
    const unsigned short *b = reinterpret_cast<const unsigned short *>(row + i);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      if (i + e >= n) break;
      if constexpr (sizeof(bits_t) == 2) set_elem_bits(r[j], e, (bits_t)__ldcg(b + e));
      else set_elem_bits(r[j], e, (bits_t)__ldcg(reinterpret_cast<const unsigned int *>(row + i) + e));
    }
  }
}

struct row_t { raw_t x[kNv], r[kNv]; };

// Resident variants keep w in shared memory, each thread its own accesses'
// slots (no barrier needed), as rmsnorm's do.
constexpr int kWSlots = kResident ? kNv * kCtaThreads : 1;

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) rmsnorm_res(const kite_row_args a)
{
  __shared__ float red[2][kRows][kRedSlots];
  const int n = (int)a.N;
  const float off = a.w_offset;
  const elem_t *w = static_cast<const elem_t *>(a.w);
  if constexpr (kResident) {
    __shared__ raw_t w_s[kWSlots];
    raw_t wr[kNv];
    load_chunk(w, 0, threadIdx.x % kThreads, n, wr);
#pragma unroll
    for (int j = 0; j < kNv; ++j) w_s[j * kCtaThreads + threadIdx.x] = wr[j];
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t r = {};
      if (p.live) {
        load_row(row_in(a.x, a.ldx, p), p, n, r.x, 0.f);
        load_row<1>(row_in(a.res, a.ldres, p), p, n, r.r, 0.f);
      }
      return r;
    }, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
      prefetch_row(row_in(a.res, a.ldres, p), p, n);
    }, [&](place_t p, const row_t &r, int k) {
      raw_t h[kNv];
#pragma unroll
      for (int j = 0; j < kNv; ++j) h[j] = residual_sum(r.x[j], r.r[j]);
      const int m = p.live ? n : 0;   // dead rows store nothing
      if (a.h) store_h(h, 0, p.t, m, row_out(a.h, a.ldh, p));
      const float rs = rsqrtf(row_sum(chunk_squares(h), red[k]) / (float)n + a.eps);
      if (p.live && p.t == 0 && a.rstd) a.rstd[p.row] = rs;
      elem_t *y = row_out(a.y, a.ldy, p);
#pragma unroll
      for (int j = 0; j < kNv; ++j) access_y(h[j], w_s[j * kCtaThreads + threadIdx.x], off, rs,
                                             access_index(0, j, p.t), m, y);
    });
    return;
  }
  for_row_blocks(a, [&](place_t p) {
    const elem_t *x = row_in(a.x, a.ldx, p), *res = row_in(a.res, a.ldres, p);
    elem_t *h_out = a.h ? row_out(a.h, a.ldh, p) : nullptr, *y = row_out(a.y, a.ldy, p);
    const int m = p.live ? n : 0;
    raw_t rx[kNv], rr[kNv], h[kNv];
    float ss = 0.f;
    for (int c = 0; c * kChunk < m; ++c) {
      load_chunk(x, c * kChunk, p.t, m, rx);
      load_chunk(res, c * kChunk, p.t, m, rr);
#pragma unroll
      for (int j = 0; j < kNv; ++j) h[j] = residual_sum(rx[j], rr[j]);
      if (h_out) store_h(h, c * kChunk, p.t, m, h_out);
      ss += chunk_squares(h);
    }
    const float rs = rsqrtf(row_sum(ss, red[0]) / (float)n + a.eps);
    if (p.live && p.t == 0 && a.rstd) a.rstd[p.row] = rs;
    // the second pass reads h back where it was stored (it may be x or res
    // itself), else adds again; each thread reads only elements it wrote
    for (int c = 0; c * kChunk < m; ++c) {
      if (h_out) {
        load_written(h_out, c * kChunk, p.t, m, h);
      } else {
        load_chunk(x, c * kChunk, p.t, m, rx);
        load_chunk(res, c * kChunk, p.t, m, rr);
#pragma unroll
        for (int j = 0; j < kNv; ++j) h[j] = residual_sum(rx[j], rr[j]);
      }
      load_chunk(w, c * kChunk, p.t, m, rx);
#pragma unroll
      for (int j = 0; j < kNv; ++j) {
        const int i = access_index(c * kChunk, j, p.t);
        if (i < m) access_y(h[j], rx[j], off, rs, i, m, y);
      }
    }
  });
}

}  // namespace

${rowops.launcher(VARIANT, "rmsnorm_res")}
