@ local rowops = require "lib.rowops"
// cross-entropy forward: loss = logsumexp(x) - x[target], the row read once (online max and sum).
${rowops.prelude(OP, P)}

namespace {

// The row's target: ignored, out of range (a NaN loss) or the logit.
struct target_t { bool ignored; float logit; };

__device__ __forceinline__ target_t classify_target(const kite_row_args &a, int64_t tgt, float logit)
{
  if (tgt == a.ignore_index) return { true, 0.f };
  if (tgt < 0 || tgt >= a.N) return { false, __int_as_float(0x7fc00000) };
  return { false, logit };
}

// Streaming rows: the row's first thread fetches the target logit from
// global memory while the row streams in (chunks hide the round trips).
__device__ __forceinline__ target_t fetch_target(const kite_row_args &a, const elem_t *x, int64_t row)
{
  const int64_t tgt = a.target[row];
  const bool in = tgt >= 0 && tgt < a.N;
  return classify_target(a, tgt, in ? to_f32(x[tgt]) : 0.f);
}

// Element d (0 <= d < kVec) of an access, without indexing the registers
// dynamically (that would put them in local memory).
__device__ __forceinline__ float raw_elem(const raw_t &r, int d)
{
  word_t w = r.w[0];
  if constexpr (kRawWords == 4) {   // selects on a copy: the frontend turns a loop of them into an index
    uint4 v;
    memcpy(&v, &r, sizeof v);
    const int k = d / kEpw;
    w = k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
  }
  raw_t one = splat(0.f);
  one.w[0] = w;
  float f[kVec];
  raw_floats1(one, f);
  return d % kEpw == 0 ? f[0] : f[kEpw - 1];
}

// Resident rows: the thread holding element tgt in r writes it to the row's
// slot (in the CTA of the row's first thread), so no dependent global load
// (target, then x[target]) holds up the row; the reduction's barrier (or the
// warp's, for a one-warp row) makes it visible to the row's first thread.
// One 32-bit compare per access: the per-element test it replaces cost more
// than the row's arithmetic.
__device__ __forceinline__ void put_target(const raw_t (&r)[kNv], int t, int64_t tgt, int n, float *slot)
{
  const int ti = tgt >= 0 && tgt < n ? (int)tgt : -1;
#pragma unroll
  for (int j = 0; j < kNv; ++j) {
    const int d = ti - access_index(0, j, t);
    if ((unsigned)d < (unsigned)kVec) put_first(slot, raw_elem(r[j], d));
  }
}

// The row's loss and lse, written by its first thread.
__device__ __forceinline__ void write_loss(const kite_row_args &a, const place_t &p, ms_t st, target_t tg)
{
  if (!p.live || p.t != 0) return;
  const float lse = st.m + logf(st.s);
  a.loss[p.row] = tg.ignored ? 0.f : lse - tg.logit;
  if (a.lse) a.lse[p.row] = lse;
}

struct row_t { raw_t r[kNv]; int64_t tgt; };

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) cross_entropy_fwd(const kite_row_args a)
{
  __shared__ scratch_t red[2];
  __shared__ float tlogit[2][kRows];   // each row's target logit, alternating like red
  const int n = (int)a.N;
  if constexpr (kResident) {
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t x = {};
      x.tgt = a.ignore_index;
      if (!p.live) return x;
      load_row(row_in(a.x, a.ldx, p), p, n, x.r, -INFINITY);
      x.tgt = a.target[p.row];   // every thread of the row: one broadcast load per warp
      return x;
    }, [&](place_t p) {
      prefetch_row(row_in(a.x, a.ldx, p), p, n);
    }, [&](place_t p, const row_t &x, int k) {
      const int m = p.live ? n : 0;   // dead rows touch nothing
      const int r = threadIdx.x / kThreads;
      put_target(x.r, p.t, x.tgt, m, &tlogit[k][r]);
      float f[kElems];
      raw_floats(x.r, f);
      float f_scale;   // f is not read again: its scale unused
      const ms_t st = resident_ms(f, red[k], &f_scale);
      if constexpr (kWarps == 1) __syncwarp();
      const bool in = x.tgt >= 0 && x.tgt < a.N && x.tgt != a.ignore_index;
      write_loss(a, p, st, classify_target(a, x.tgt, in && p.t == 0 ? tlogit[k][r] : 0.f));
    });
    return;
  }
  for_row_blocks(a, [&](place_t p) {
    const elem_t *x = row_in(a.x, a.ldx, p);
    const int m = p.live ? n : 0;
    raw_t r[kNv] = {};
    ms_t st = { -INFINITY, 0.f };
    target_t tg = { true, 0.f };
    for (int c = 0; c * kChunk < m; ++c) {
      load_first(x, c, p, m, r);
      if (c == 0 && p.t == 0) tg = fetch_target(a, x, p.row);
      st = chunk_stats(st, r, c * kChunk, p.t, m);
    }
    write_loss(a, p, row_ms(st, red[0]), tg);
  });
}

}  // namespace

${rowops.launcher(VARIANT, "cross_entropy_fwd")}
