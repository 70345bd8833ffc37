@ local rowops = require "lib.rowops"
@ local ptx = require "lib.ptx"
// layernorm forward: y = (x - mean) * rstd * w + b, rstd = rsqrt(var + eps) with the variance about
// the mean (not E[x^2] - mean^2, which cancels: streaming rows merge exact per-chunk moments); b may
// be absent; mean and rstd (M floats each) written when given.
${rowops.prelude(OP, P)}

namespace {

${ptx.helpers({ "ASYNC" })}
// A row's mean and rstd.
struct stats_t { float mean, rs; };

// Centres an access at element i on the mean (f -= mean, kept for y) and
// returns s + the sum of the squares, its elements at or past n left out: a
// test per element only in the row's last access.
__device__ __forceinline__ float access_squares(float *f, float mean, int i, int n, float s)
{
#pragma unroll
  for (int e = 0; e < kVec; ++e) f[e] -= mean;
  if (i + kVec <= n) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) s = fmaf(f[e], f[e], s);
    return s;
  }
#pragma unroll
  for (int e = 0; e < kVec; ++e) s = i + e < n ? fmaf(f[e], f[e], s) : s;
  return s;
}

// Count, mean and sum of squared deviations of some of a row's elements.
// Merged pairwise (Chan, Golub and LeVeque), so a streaming row needs one pass
// for its statistics, and nothing cancels however far the mean is from 0.
struct moments_t { float n, mean, m2; };

__device__ __forceinline__ moments_t moments_merge(const moments_t &a, const moments_t &b)
{
  if (b.n == 0.f) return a;
  const float n = a.n + b.n, d = b.mean - a.mean, wb = b.n / n;
  return { n, fmaf(d, wb, a.mean), a.m2 + b.m2 + d * d * a.n * wb };
}

// The moments of this thread's elements of the chunk at base below n (loaded
// with 0 past n), from its registers: the mean, then the squares about it.
__device__ __forceinline__ moments_t chunk_moments(const raw_t (&r)[kNv], int base, int t, int n)
{
  float f[kElems], s = 0.f, q = 0.f;
  int count = 0;
  raw_floats(r, f);
#pragma unroll
  for (int j = 0; j < kNv; ++j) count += min(kVec, max(0, n - access_index(base, j, t)));
  if (count == 0) return { 0.f, 0.f, 0.f };
#pragma unroll
  for (int e = 0; e < kElems; ++e) s += f[e];
  const float mean = s / (float)count;
#pragma unroll
  for (int j = 0; j < kNv; ++j) q = access_squares(&f[j * kVec], mean, access_index(base, j, t), n, q);
  return { (float)count, mean, q };
}

// y of x's access at element i, centred on m (the mean; w and b's accesses
// given; b absent: zeros).  Cluster rows centre it on their CTA's mean
// instead: c = (that mean - the row's) * rs.
__device__ __forceinline__ void access_y(const raw_t &x, float m, const raw_t &w, const raw_t &b, float rs, float c,
                                         int i, int n, elem_t *y)
{
  float d[kVec], fw[kVec], fb[kVec];
  raw_floats1(x, d);
#pragma unroll
  for (int e = 0; e < kVec; ++e) d[e] -= m;
  raw_floats1(w, fw);
  raw_floats1(b, fb);
#pragma unroll
  for (int e = 0; e < kVec; ++e) d[e] = fmaf(kCluster > 1 ? fmaf(d[e], rs, c) : d[e] * rs, fw[e], fb[e]);
  store_floats(y, i, n, d);
}

struct row_t { raw_t x[kNv]; };
struct red_t {   // the sum's and the squares' slots (streaming rows), the warps' pairs of both (resident)
  float s[kRows][kRedSlots], q[kRows][kRedSlots];
  float2 m[kRows][kRedSlots];
};

// The row's mean and rstd from each thread's moments: the mean, then each
// thread's squares moved to it (m2 + n d^2), summed.
__device__ __forceinline__ stats_t row_stats(const moments_t &mo, red_t &red, int n, float eps)
{
  stats_t st;
  st.mean = row_sum(mo.n * mo.mean, red.s) / (float)n;
  const float d = mo.mean - st.mean;
  st.rs = rsqrtf(row_sum(fmaf(mo.n * d, d, mo.m2), red.q) / (float)n + eps);
  return st;
}

// The elements of a row of n that `threads` threads from the row's thread t0
// on hold (a warp's, a CTA's): their span in each of the kNv accesses.
__device__ __forceinline__ int span_elems(int n, int t0, int threads)
{
  int c = 0;
#pragma unroll
  for (int j = 0; j < kNv; ++j) c += min(threads * kVec, max(0, n - access_index(0, j, t0)));
  return c;
}

// The squares about m of a resident thread's accesses (x converted again:
// floats kept across the row's reductions would cost a cluster row its second
// CTA per SM, 64 registers at 512 threads).
__device__ __forceinline__ float resident_squares(const raw_t (&x)[kNv], float m, int t, int n)
{
  float q = 0.f;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    float f[kVec];
    raw_floats1(x[j], f);
    q = access_squares(f, m, access_index(0, j, t), n, q);
  }
  return q;
}

// a / b for a count b > 0 of a resident row's elements, in the reductions of
// every row: in cluster rows by the reciprocal (2 ulp), where IEEE division
// took eight instruction sequences a row a thread (H100, 256 K, where
// layernorm issues 1.66 times rmsnorm's instructions; bf16 cluster rows
// 1-8% faster, session 32).  Not in the other rows, nor for the warp's mean in
// cta_moments: there it made 64-register rows spill (bf16 reg n4, f16).
__device__ __forceinline__ float div_fast(float a, float b)
{
  if constexpr (kCluster > 1) return __fdividef(a, b);
  else return a / b;
}

// The (sum, squares about the mean) of kParts parts of a row (a CTA's warps, a
// cluster's CTAs) from each part's (sum, squares about its own mean) v, lane l
// holding part l mod kParts's, of np elements (n in all): the sum, then each
// part's squares moved to the mean (m2 + np d^2, Chan, Golub and LeVeque's
// pairwise formula), summed.  One float a lane step and no division in the
// steps: a merge of (count, mean, m2) triples took 512-thread cluster rows past
// 64 registers.
template <int kParts>
__device__ __forceinline__ float2 merge_parts(float2 v, float np, float n)
{
  const float s = lane_fold<kParts>(v.x, op_sum{});
  const float d = np > 0.f ? div_fast(v.x, np) - div_fast(s, n) : 0.f;
  return make_float2(s, lane_fold<kParts>(fmaf(np * d, d, v.y), op_sum{}));
}

// The (sum, squares about its mean) of the CTA's part of a resident row, with
// one CTA barrier: each warp's sum by shuffles, the squares about the warp's
// own mean likewise, then the warps' pairs through shared memory (m: a slot a
// warp), merged by merge_parts.  t: the thread's index in the row; s: the sum
// of its elements; nc: the CTA's elements of the row.  Every thread of the
// CTA calls it.
__device__ __forceinline__ float2 cta_moments(const raw_t (&x)[kNv], float s, float2 (*m)[kRedSlots], int t, int n,
                                              float nc)
{
  const int lane = threadIdx.x % 32, t0 = t - threadIdx.x % kThreads;   // t0: the CTA's first thread in the row
  s = lane_fold<32>(s, op_sum{});
  const float nw = (float)span_elems(n, t - lane, 32);
  const float q = lane_fold<32>(resident_squares(x, nw > 0.f ? s / nw : 0.f, t, n), op_sum{});
  if constexpr (kWarps == 1) return make_float2(s, q);
  const int r = threadIdx.x / kThreads, w = lane % kWarps;
  if (lane == 0) m[r][threadIdx.x % kThreads / 32] = make_float2(s, q);
  __syncthreads();
  return nc > 0.f ? merge_parts<kWarps>(m[r][w], (float)span_elems(n, t0 + w * 32, 32), nc) : make_float2(0.f, 0.f);
}

// A resident row's mean and rstd from its (sum, squares about the mean).
__device__ __forceinline__ stats_t moments_stats(float2 m, int n, float eps)
{
  return { div_fast(m.x, (float)n), rsqrtf(div_fast(m.y, (float)n) + eps) };
}

// A cluster row's mean and rstd with one exchange between its CTAs (an
// mbarrier round trip): each CTA's (sum, squares about its mean *mc) by
// cta_moments, merged by merge_parts.  *c: access_y's correction from the
// CTA's mean to the row's.
__device__ __forceinline__ stats_t cluster_stats(const raw_t (&x)[kNv], float s, red_t &red, int t, int n, float eps,
                                                 float *mc, float *c)
{
  const float nc = (float)span_elems(n, t - threadIdx.x % kThreads, kThreads);
  const float2 cm = cta_moments(x, s, red.m, t, n, nc);
  *mc = nc > 0.f ? div_fast(cm.x, nc) : 0.f;
  const float2 *v = cluster_exchange(cm);
  const int r = threadIdx.x % kCluster;
  const stats_t st = moments_stats(merge_parts<kCluster>(v[r], (float)span_elems(n, r * kThreads, kThreads), (float)n),
                                   n, eps);
  *c = (*mc - st.mean) * st.rs;
  return st;
}

// mean and rstd of a live row, by its first thread, when asked for.
__device__ __forceinline__ void store_stats(const kite_row_args &a, const place_t &p, const stats_t &st)
{
  if (!p.live || p.t != 0) return;
  if (a.mean) a.mean[p.row] = st.mean;
  if (a.rstd) a.rstd[p.row] = st.rs;
}

// This thread's accesses of w (or b) into its shared-memory slots, without
// registers: cp.async, zero-filled past n.  Read after cp_async_wait().
__device__ __forceinline__ void copy_slots(const elem_t *v, int t, int n, raw_t *slots)
{
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int i = access_index(0, j, t);
    const int bytes = i >= n ? 0 : (n - i >= kVec ? kVec : n - i) * (int)sizeof(elem_t);
    cp_async16(&slots[j * kCtaThreads + threadIdx.x], v + (bytes ? i : 0), bytes);
  }
}

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) layernorm_fwd(const kite_row_args a)
{
  __shared__ red_t red[2];
  const int n = (int)a.N;
  const elem_t *w = static_cast<const elem_t *>(a.w), *b = static_cast<const elem_t *>(a.b);
  if constexpr (kResident) {
    // w and b in shared memory, each thread its own accesses' slots (no
    // barrier needed), as rmsnorm's do; dynamic, as 512 threads of 4
    // accesses need 64 KB
    raw_t *const w_s = weight_slots(0), *const b_s = weight_slots(1);
    bool wb_copied = false;   // w and b are copied once per CTA, after its first row's loads are
                              // issued: their L2 latency then hides under x's
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t r = {};
      if (p.live) {
        if constexpr (kStaged) load_row(row_in(a.x, a.ldx, p), p, n, r.x, 0.f);
        else load_whole(row_in(a.x, a.ldx, p), p.t, n, r.x);   // H100, 16 K: 1.3% faster
      }
      if (!wb_copied) {
        copy_slots(w, p.t, n, w_s);
        if (b) copy_slots(b, p.t, n, b_s);
        else {
#pragma unroll
          for (int j = 0; j < kNv; ++j) b_s[j * kCtaThreads + threadIdx.x] = splat(0.f);
        }
        wb_copied = true;
      }
      return r;
    }, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
    }, [&](place_t p, const row_t &r, int k) {
      cp_async_wait();   // this thread's w and b slots (a no-op after the first row block)
      // x stays raw (0 past the row's end), converted for the sum, the squares and y
      float s = 0.f, m = 0.f, c = 0.f;   // m: what y centres x on (the row's mean; a cluster row's CTA's)
#pragma unroll
      for (int j = 0; j < kNv; ++j) {
        float f[kVec];
        raw_floats1(r.x[j], f);
#pragma unroll
        for (int e = 0; e < kVec; ++e) s += f[e];
      }
      stats_t st;
      if constexpr (kCluster > 1) {
        st = cluster_stats(r.x, s, red[k], p.t, n, a.eps, &m, &c);
      } else {
        st = moments_stats(cta_moments(r.x, s, red[k].m, p.t, n, (float)n), n, a.eps);   // one CTA holds the row
        m = st.mean;
      }
      elem_t *y = row_out(a.y, a.ldy, p);
      const int lim = p.live ? n : 0;   // dead rows store nothing
#pragma unroll
      for (int j = 0; j < kNv; ++j)
        access_y(r.x[j], m, w_s[j * kCtaThreads + threadIdx.x], b_s[j * kCtaThreads + threadIdx.x], st.rs, c,
                 access_index(0, j, p.t), lim, y);
      store_stats(a, p, st);   // after y: fewer registers live across its stores
    });
    return;
  }
  for_row_blocks(a, [&](place_t p) {
    const elem_t *x = row_in(a.x, a.ldx, p);
    elem_t *y = row_out(a.y, a.ldy, p);
    const int m = p.live ? n : 0;
    raw_t r[kNv], rw[kNv], rb[kNv] = {};
    moments_t mo = { 0.f, 0.f, 0.f };
    for (int c = 0; c * kChunk < m; ++c) {   // one pass for the statistics, the first chunks kept
      load_first(x, c, p, m, r);
      mo = moments_merge(mo, chunk_moments(r, c * kChunk, p.t, m));
    }
    const stats_t st = row_stats(mo, red[0], n, a.eps);
    store_stats(a, p, st);
    // each thread reads its elements of x before it writes them: y may be x itself
    for (int c = 0; c * kChunk < m; ++c) {
      load_again(x, c, p, m, r);
      load_chunk(w, c * kChunk, p.t, m, rw);
      if (b) load_chunk(b, c * kChunk, p.t, m, rb);
#pragma unroll
      for (int j = 0; j < kNv; ++j) {
        const int i = access_index(c * kChunk, j, p.t);
        if (i < m) access_y(r[j], st.mean, rw[j], rb[j], st.rs, 0.f, i, m, y);
      }
    }
  });
}

}  // namespace

${rowops.launcher(VARIANT, "layernorm_fwd")}
