@ local rowops = require "lib.rowops"
// rmsnorm forward: y = x * rsqrt(mean(x^2) + eps) * (w + w_offset), one row per kThreads threads.
${rowops.prelude(OP, P)}

namespace {

// y for one chunk of x already loaded into r; w_at(j) gives w's access j.
template <typename W>
__device__ __forceinline__ void rmsnorm_out(const raw_t (&r)[kNv], W w_at, int base, int t, int n,
                                            float rs, float off, elem_t *y)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    if (i >= n) continue;
    float xf[kVec], wf[kVec];
    to_floats(r[j], i, n, 0.f, xf);
    to_floats(w_at(j), i, n, 0.f, wf);
#pragma unroll
    for (int e = 0; e < kVec; ++e) xf[e] = xf[e] * rs * (wf[e] + off);
    store_floats(y, i, n, xf);
  }
}

__device__ __forceinline__ float sum_squares(const raw_t (&r)[kNv], int base, int t, int n)
{
  float ss = 0.f;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(base, j, t);
    float f[kVec];
    to_floats(r[j], i, n, 0.f, f);
#pragma unroll
    for (int e = 0; e < kVec; ++e) ss = fmaf(f[e], f[e], ss);
  }
  return ss;
}

// A resident row: converted to floats once, for the sum and the output.  A
// whole chunk (kChunk <= n, the same in every thread; 0 for dead rows) stores
// with no test per access, and w_offset 0 costs no add: with load_whole, ncu
// (H100, N = 1 K) counted a quarter fewer instructions.
template <typename W>
__device__ __forceinline__ void rmsnorm_resident(const raw_t (&r)[kNv], W w_at, const place_t &p, int n,
                                                 const kite_row_args &a, float (*red)[kRedSlots])
{
  float f[kElems];
  raw_floats(r, f);   // zero past the row's end
  float ss = 0.f;
#pragma unroll
  for (int e = 0; e < kElems; ++e) ss = fmaf(f[e], f[e], ss);
  const float rs = rsqrtf(__fdividef(row_sum(ss, red), (float)a.N) + a.eps);
  if (p.live && p.t == 0 && a.rstd) a.rstd[p.row] = rs;
  elem_t *y = row_out(a.y, a.ldy, p);
  const bool whole = kChunk <= n;
  auto out = [&](auto no_offset) {
#pragma unroll
    for (int j = 0; j < kNv; ++j) {
      const int i = access_index(0, j, p.t);
      if (!whole && i >= n) continue;
      float wf[kVec];
      raw_floats1(w_at(j), wf);
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        f[j * kVec + e] = f[j * kVec + e] * rs * (decltype(no_offset)::value ? wf[e] : wf[e] + a.w_offset);
      if (whole) *reinterpret_cast<raw_t *>(y + i) = floats_raw(&f[j * kVec]);
      else store_floats(y, i, n, &f[j * kVec]);
    }
  };
  if (a.w_offset == 0.f) out(std::true_type{});
  else out(std::false_type{});
}

struct row_t { raw_t r[kNv]; };

// Resident variants keep w, which every row shares, in shared memory: each
// thread its own accesses' slots, so no barrier is needed and the registers
// hold only x (two row blocks of it when pipelined).
constexpr int kWSlots = kResident ? kNv * kCtaThreads : 1;


__global__ void __launch_bounds__(kCtaThreads, kMinCtas) rmsnorm_fwd(const kite_row_args a)
{
  __shared__ float red[2][kRows][kRedSlots];
  const int n = (int)a.N;
  const elem_t *w = static_cast<const elem_t *>(a.w);
  raw_t wr[kNv] = {};
  if constexpr (kResident) {
    __shared__ raw_t w_s[kWSlots];
    bool w_copied = false;   // w is copied once per CTA, after its first row's loads are issued:
                             // w's L2 latency then hides under x's, instead of delaying them
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t x = {};
      if (p.live) {
        if constexpr (kStaged) load_row(row_in(a.x, a.ldx, p), p, n, x.r, 0.f);
        else load_whole(row_in(a.x, a.ldx, p), p.t, n, x.r);
      }
      if (!w_copied) {
        load_whole(w, p.t, n, wr);
#pragma unroll
        for (int j = 0; j < kNv; ++j) w_s[j * kCtaThreads + threadIdx.x] = wr[j];
        w_copied = true;
      }
      return x;
    }, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
    }, [&](place_t p, const row_t &x, int k) {
      rmsnorm_resident(x.r, [&](int j) { return w_s[j * kCtaThreads + threadIdx.x]; }, p,
                       p.live ? n : 0, a, red[k]);   // dead rows store nothing
    });
    return;
  }
  for_row_blocks(a, [&](place_t p) {
    const elem_t *x = row_in(a.x, a.ldx, p);
    elem_t *y = row_out(a.y, a.ldy, p);
    const int m = p.live ? n : 0;
    raw_t r[kNv] = {};
    float ss = 0.f;
    for (int c = 0; c * kChunk < m; ++c) {
      load_first(x, c, p, m, r);
      ss += sum_squares(r, c * kChunk, p.t, m);
    }
    const float rs = rsqrtf(row_sum(ss, red[0]) / (float)n + a.eps);
    if (p.live && p.t == 0 && a.rstd) a.rstd[p.row] = rs;
    for (int c = 0; c * kChunk < m; ++c) {
      load_again(x, c, p, m, r);
      load_chunk(w, c * kChunk, p.t, m, wr);
      rmsnorm_out(r, [&](int j) { return wr[j]; }, c * kChunk, p.t, m, rs, a.w_offset, y);
    }
  });
}

}  // namespace

${rowops.launcher(VARIANT, "rmsnorm_fwd")}
