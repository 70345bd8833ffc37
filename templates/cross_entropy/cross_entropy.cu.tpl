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

// The row's loss and lse, written by its first thread.
__device__ __forceinline__ void write_loss(const kite_row_args &a, const place_t &p, ms_t st, target_t tg)
{
  if (!p.live || p.t != 0) return;
  const float lse = st.m + logf(st.s);
  a.loss[p.row] = tg.ignored ? 0.f : lse - tg.logit;
  if (a.lse) a.lse[p.row] = lse;
}

struct row_t { raw_t r[kNv]; target_t tg; };

__global__ void __launch_bounds__(kCtaThreads, kMinCtas) cross_entropy_fwd(const kite_row_args a)
{
  __shared__ ms_t red[2][kRows][kWarps];
  const int n = (int)a.N;
  if constexpr (kResident) {
    pipeline_rows<row_t>(a, [&](place_t p) {
      row_t x = {};
      x.tg = { true, 0.f };
      if (!p.live) return x;
      const elem_t *xr = row_in(a.x, a.ldx, p);
      load_row(xr, p, n, x.r);
      if (p.t == 0) x.tg = fetch_target(a, xr, p.row);
      return x;
    }, [&](place_t p, const row_t &x, int k) {
      const int m = p.live ? n : 0;   // dead rows touch nothing
      write_loss(a, p, row_ms(chunk_stats({ -INFINITY, 0.f }, x.r, 0, p.t, m), red[k]), x.tg);
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
