/* test_norm.c - rmsnorm's backward (kite_rmsnorm_bwd), its forward over a
 * residual stream (kite_rmsnorm_fwd_residual), layernorm's forward
 * (kite_layernorm_fwd) and backward (kite_layernorm_bwd) on a GPU, against float64 references on the host.
 *
 * Without a usable sm_90 device it prints
 *     KITE_SKIPPED: <number of GPU test cases> (no CUDA device: <reason>)
 * and exits 0 without running one.  Otherwise (CK_NOFORK):
 *   variants   every rmsnorm_bwd and layernorm_bwd variant through kite_run_variant, at row
 *              lengths from 1 to 262144 within its range, odd row counts and
 *              one of many rows, padded strides (odd ones and an unaligned
 *              base for element-wise variants); dx and dw poisoned first,
 *              every element checked, row padding and guards untouched, a
 *              second run byte-identical (dx, dw, db: no atomics), dw NULL
 *              leaving dx the same bytes
 *   entry      kite_rmsnorm_bwd with the workspace kite_rmsnorm_bwd_workspace
 *              asks for: many rows, w_offset 1 (Gemma), in place (dx == dy,
 *              dx == x), each dtype
 *   diff       f32: dx and dw against central differences of the loss
 *              sum(y * g), y from kite_rmsnorm_fwd, on small shapes
 *   invalid    invalid calls on real buffers return their error, touch nothing
 *   res_entry  kite_rmsnorm_fwd_residual: h apart, none, == residual, == x; y == x;
 *              no residual (rmsnorm with w_offset); each dtype, short and long rows
 *   res_invalid  its invalid calls touch nothing
 *   ln_entry   kite_layernorm_fwd with and without b, mean and rstd, in place
 *   ln_invalid its invalid calls touch nothing
 *   lnb_entry  kite_layernorm_bwd as entry's cases (dw and db, dw alone, db alone)
 *   lnb_diff   f32: its dx, dw and db against central differences through kite_layernorm_fwd
 *   lnb_invalid  its invalid calls touch nothing
 * The variants case runs rmsnorm_res's and layernorm's variants as well: h the exact bytes of
 * x + residual rounded to the dtype, y and rstd within tolerance, a second run
 * byte-identical.
 * One line per variant or case goes to stdout (sizes, worst error / tolerance). */
#define _POSIX_C_SOURCE 200809L
#include "kite_test.h"

#include <fnmatch.h>

#include "kite_internal.h"

#define POISON 0xff   /* NaN in bf16, f16 and f32 */
#define GUARD 64      /* elements of poison after every output */
#define EPS 1e-5f
static const kite_dtype dtypes[3] = { KITE_BF16, KITE_F16, KITE_F32 };

/* dx's tolerance: its rounding to the dtype, and f32 arithmetic's share of
   the row's scale (rstd * (max |g| + max |xh| * mean |xh g|)), and
   kt_out_atol (f16 dx of N = 1: 8.07e-8 stored as 5.96e-8, the nearest). */
static double dx_rtol(kite_dtype d) { return d == KITE_BF16 ? 8e-3 : d == KITE_F16 ? 1e-3 : 2e-6; }
#define F32_SHARE 2e-5
#define DW_SHARE 1e-5   /* of the sum of |dy * xh| over the rows */

enum { NOT_IN_PLACE, DX_IS_DY, DX_IS_X };

enum { SUM_DW = 1, SUM_DB = 2 };   /* the sums over rows a call asks for */

/* One problem of rmsnorm_bwd or (ln) layernorm_bwd: host inputs as stored,
   device buffers, references. */
typedef struct nproblem {
  kite_dtype dt;
  int ln;                  /* layernorm: x centred on the mean, dw and db */
  int64_t M, N, ld, off;   /* every tensor's row stride; elements the bases sit past their allocation */
  float w_offset;
  int inplace, sums;
  size_t bytes;            /* of each row tensor's allocation */
  void *xh, *wh, *dyh;
  float *rstd, *mean;
  void *xa, *dya, *dxa;    /* allocations (dxa may be xa or dya) */
  void *wd, *ws;
  float *rstdd, *meand, *dwd, *dbd;
  size_t ws_bytes;
  double *dx_ref, *dx_tol, *dw_ref, *dw_tol, *db_ref, *db_tol;
} nproblem;

/* The partial rows per CTA of the op's workspace. */
static int np_rows(const nproblem *p) { return p->ln ? 2 : 1; }

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
static void *at(void *base, const nproblem *p) { return (char *)base + p->off * kt_dtype_size(p->dt); }

/* mean (layernorm; else 0) and rstd as the forward stores them, from x as stored. */
static void host_rstd(nproblem *p)
{
  for (int64_t i = 0; i < p->M; i++) {
    double s = 0, ss = 0;
    for (int64_t j = 0; j < p->N; j++) s += kt_load(p->dt, p->xh, p->off + i * p->ld + j);
    const double mean = p->ln ? s / (double)p->N : 0;
    for (int64_t j = 0; j < p->N; j++) {
      const double v = kt_load(p->dt, p->xh, p->off + i * p->ld + j) - mean;
      ss += v * v;
    }
    p->mean[i] = (float)mean;
    p->rstd[i] = (float)(1.0 / sqrt(ss / (double)p->N + EPS));
  }
}

/* The float64 references of dx, dw and db, and their tolerances. */
static void host_reference(nproblem *p)
{
  const int64_t M = p->M, N = p->N;
  double *xh = kt_halloc((size_t)N * sizeof(double)), *g = kt_halloc((size_t)N * sizeof(double));
  double *dw_abs = kt_halloc((size_t)N * sizeof(double)), *db_abs = kt_halloc((size_t)N * sizeof(double));
  for (int64_t j = 0; j < N; j++) p->dw_ref[j] = dw_abs[j] = p->db_ref[j] = db_abs[j] = 0;
  for (int64_t i = 0; i < M; i++) {
    const double rs = p->rstd[i];
    double dot = 0, dot_abs = 0, gsum = 0, gmax = 0, xmax = 0;
    for (int64_t j = 0; j < N; j++) {
      const int64_t e = p->off + i * p->ld + j;
      const double dy = kt_load(p->dt, p->dyh, e);
      xh[j] = (kt_load(p->dt, p->xh, e) - p->mean[i]) * rs;
      g[j] = dy * ((double)kt_load(p->dt, p->wh, j) + p->w_offset);
      dot += xh[j] * g[j];
      dot_abs += fabs(xh[j] * g[j]);
      gsum += g[j];
      gmax = fmax(gmax, fabs(g[j]));
      xmax = fmax(xmax, fabs(xh[j]));
      p->dw_ref[j] += dy * xh[j];
      dw_abs[j] += fabs(dy * xh[j]);
      p->db_ref[j] += dy;
      db_abs[j] += fabs(dy);
    }
    const double c = dot / (double)N, cg = p->ln ? gsum / (double)N : 0;
    const double scale = rs * (gmax + fabs(cg) + xmax * dot_abs / (double)N);
    for (int64_t j = 0; j < N; j++) {
      const double ref = rs * (g[j] - cg - xh[j] * c);
      p->dx_ref[i * N + j] = ref;
      p->dx_tol[i * N + j] = dx_rtol(p->dt) * fabs(ref) + F32_SHARE * scale + kt_out_atol(p->dt) + 1e-30;
    }
  }
  for (int64_t j = 0; j < N; j++) {
    p->dw_tol[j] = DW_SHARE * dw_abs[j] + 1e-30;
    p->db_tol[j] = DW_SHARE * db_abs[j] + 1e-30;
  }
}

/* A problem with random data (x and dy normal, x off centre for layernorm, w
   around 1 - w_offset), its references, device copies; dx and the sums
   poisoned.  Every sum the op makes is asked for. */
static nproblem np_new(int ln, kite_dtype dt, int64_t M, int64_t N, int aligned, float w_offset, int inplace,
                       const char *tag, int64_t seq)
{
  nproblem p;
  memset(&p, 0, sizeof p);
  ck_assert_msg(!ln || w_offset == 0.f, "layernorm_bwd takes no w_offset");
  p.dt = dt, p.ln = ln, p.M = M, p.N = N, p.w_offset = w_offset, p.inplace = inplace;
  p.sums = ln ? SUM_DW | SUM_DB : SUM_DW;
  p.ld = aligned ? round_up(N, 8) + 8 : N + 3;
  p.off = aligned ? 8 : 1;
  const int es = kt_dtype_size(dt);
  const int64_t elems = p.off + (M - 1) * p.ld + N + GUARD;
  p.bytes = (size_t)elems * (size_t)es;
  kt_rng r = kt_rng_for(tag, seq);
  p.xh = kt_halloc(p.bytes), p.dyh = kt_halloc(p.bytes), p.wh = kt_halloc((size_t)N * es);
  memset(p.xh, 0, p.bytes);
  memset(p.dyh, 0, p.bytes);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      kt_store(dt, p.xh, p.off + i * p.ld + j, (float)(kt_normal(&r) * 2.0 + (ln ? 1.5 : 0.0)));
      kt_store(dt, p.dyh, p.off + i * p.ld + j, (float)kt_normal(&r));
    }
  for (int64_t j = 0; j < N; j++) kt_store(dt, p.wh, j, (float)(1.0 - w_offset + 0.5 * kt_normal(&r)));
  p.rstd = kt_halloc((size_t)M * sizeof(float)), p.mean = kt_halloc((size_t)M * sizeof(float));
  host_rstd(&p);
  p.dx_ref = kt_halloc((size_t)(M * N) * sizeof(double));
  p.dx_tol = kt_halloc((size_t)(M * N) * sizeof(double));
  p.dw_ref = kt_halloc((size_t)N * sizeof(double));
  p.dw_tol = kt_halloc((size_t)N * sizeof(double));
  p.db_ref = kt_halloc((size_t)N * sizeof(double));
  p.db_tol = kt_halloc((size_t)N * sizeof(double));
  host_reference(&p);
  p.xa = kt_dalloc(p.bytes), p.dya = kt_dalloc(p.bytes), p.wd = kt_dalloc((size_t)N * es);
  p.rstdd = kt_dalloc((size_t)M * sizeof(float)), p.meand = kt_dalloc((size_t)M * sizeof(float));
  p.dwd = kt_dalloc((size_t)(N + GUARD) * sizeof(float));
  p.dbd = kt_dalloc((size_t)(N + GUARD) * sizeof(float));
  KT_KITE_OK(ln ? kite_layernorm_bwd_workspace(M, N, &p.ws_bytes) : kite_rmsnorm_bwd_workspace(M, N, &p.ws_bytes));
  ck_assert_msg(p.ws_bytes >= (size_t)(np_rows(&p) * round_up(N, 4)) * sizeof(float), "workspace of %zu bytes",
                p.ws_bytes);
  p.ws = kt_dalloc(p.ws_bytes);
  p.dxa = inplace == DX_IS_DY ? p.dya : inplace == DX_IS_X ? p.xa : kt_dalloc(p.bytes);
  return p;
}

/* Inputs uploaded, outputs poisoned (dx first, so in place the input wins). */
static void np_reset(nproblem *p)
{
  KT_CUDA_CHECK(cudaMemset(p->dxa, POISON, p->bytes));
  KT_CUDA_CHECK(cudaMemcpy(p->xa, p->xh, p->bytes, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(p->dya, p->dyh, p->bytes, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(p->wd, p->wh, (size_t)p->N * kt_dtype_size(p->dt), cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(p->rstdd, p->rstd, (size_t)p->M * sizeof(float), cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(p->meand, p->mean, (size_t)p->M * sizeof(float), cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemset(p->dwd, POISON, (size_t)(p->N + GUARD) * sizeof(float)));
  KT_CUDA_CHECK(cudaMemset(p->dbd, POISON, (size_t)(p->N + GUARD) * sizeof(float)));
  KT_CUDA_CHECK(cudaMemset(p->ws, POISON, p->ws_bytes));
}

static kite_row_args np_args(const nproblem *p)
{
  kite_row_args a;
  memset(&a, 0, sizeof a);
  a.M = p->M, a.N = p->N;
  a.x = at(p->xa, p), a.ldx = p->ld;
  a.dy = at(p->dya, p), a.lddy = p->ld;
  a.y = at(p->dxa, p), a.ldy = p->ld;
  a.w = p->wd, a.w_offset = p->w_offset, a.rstd = p->rstdd;
  if (p->ln) a.mean = p->meand;
  if (p->sums & SUM_DW) a.dw = p->dwd;
  if (p->sums & SUM_DB) a.db = p->dbd;
  if (p->sums) {
    a.partials = p->ws;
    a.parts = (int64_t)(p->ws_bytes / ((size_t)(np_rows(p) * round_up(p->N, 4)) * sizeof(float)));
  }
  return a;
}

static kite_status np_entry(const nproblem *p)
{
  const kite_row_args a = np_args(p);
  void *ws = p->sums ? p->ws : NULL;
  const size_t wsb = p->sums ? p->ws_bytes : 0;
  if (p->ln)
    return kite_layernorm_bwd(p->dt, a.M, a.N, a.x, a.ldx, a.w, a.mean, a.rstd, a.dy, a.lddy, a.y, a.ldy, a.dw, a.db,
                              ws, wsb, 0);
  return kite_rmsnorm_bwd(p->dt, a.M, a.N, a.x, a.ldx, a.w, a.w_offset, a.rstd, a.dy, a.lddy, a.y, a.ldy, a.dw, ws,
                          wsb, 0);
}

typedef struct outputs { unsigned char *dx, *dw, *db; } outputs;

static outputs np_download(const nproblem *p)
{
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  const size_t sb = (size_t)(p->N + GUARD) * sizeof(float);
  outputs o = { kt_halloc(p->bytes), kt_halloc(sb), kt_halloc(sb) };
  KT_CUDA_CHECK(cudaMemcpy(o.dx, p->dxa, p->bytes, cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(o.dw, p->dwd, sb, cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(o.db, p->dbd, sb, cudaMemcpyDeviceToHost));
  return o;
}

static int poisoned(const unsigned char *b, size_t from, size_t to)
{
  for (size_t k = from; k < to; k++)
    if (b[k] != POISON) return 0;
  return 1;
}

/* A sum over rows (dw or db): every element within tolerance when asked for,
   the rest of its buffer (all of it when not asked for) still poison. */
static double sum_check(const nproblem *p, const unsigned char *got, const double *ref, const double *tol, int asked,
                        const char *name, const char *what)
{
  const float *v = (const float *)got;
  double worst = 0;
  for (int64_t j = 0; asked && j < p->N; j++) {
    const double q = fabs(v[j] - ref[j]) / tol[j];
    KT_EXPECT(q <= 1.0, "%s: %s[%lld] = %.9g, want %.9g (tolerance %.3g)", what, name, (long long)j,
              (double)v[j], ref[j], tol[j]);
    worst = fmax(worst, q);
  }
  ck_assert_msg(poisoned(got, asked ? (size_t)p->N * sizeof(float) : 0, (size_t)(p->N + GUARD) * sizeof(float)),
                "%s: %s written %s", what, name, asked ? "past its end" : "though not asked for");
  return worst;
}

/* Every dx, dw and db element within tolerance; everything else of their
   buffers still poison (not in place: the padding is dx's own then).  Returns
   the worst error over tolerance. */
static double np_check(const nproblem *p, const outputs *o, const char *what)
{
  const int es = kt_dtype_size(p->dt);
  double worst = 0;
  for (int64_t i = 0; i < p->M; i++) {
    const int64_t row = p->off + i * p->ld;
    for (int64_t j = 0; j < p->N; j++) {
      const double got = kt_load(p->dt, o->dx, row + j), ref = p->dx_ref[i * p->N + j];
      const double q = fabs(got - ref) / p->dx_tol[i * p->N + j];
      KT_EXPECT(q <= 1.0, "%s: dx[%lld][%lld] = %.9g, want %.9g (tolerance %.3g)", what, (long long)i,
                (long long)j, got, ref, p->dx_tol[i * p->N + j]);
      worst = fmax(worst, q);
    }
    if (!p->inplace && i + 1 < p->M)
      ck_assert_msg(poisoned(o->dx, (size_t)(row + p->N) * es, (size_t)(row + p->ld) * es),
                    "%s: dx row %lld's padding was written", what, (long long)i);
  }
  if (!p->inplace) {
    ck_assert_msg(poisoned(o->dx, 0, (size_t)p->off * es), "%s: dx written before its base", what);
    ck_assert_msg(poisoned(o->dx, (size_t)(p->off + (p->M - 1) * p->ld + p->N) * es, p->bytes),
                  "%s: dx's guard was written", what);
  }
  worst = fmax(worst, sum_check(p, o->dw, p->dw_ref, p->dw_tol, p->sums & SUM_DW, "dw", what));
  return fmax(worst, sum_check(p, o->db, p->db_ref, p->db_tol, p->sums & SUM_DB, "db", what));
}

/* ---- every variant -------------------------------------------------------------------- */

static int64_t rows_for(int64_t N) { return N <= 4097 ? 37 : N <= 65537 ? 5 : 3; }

/* The variant's problems: row lengths within its range, and many rows of its shortest. */
static int variant_shapes(const kite_variant_info *v, int64_t (*shape)[2])
{
  static const int64_t ns[] = { 1, 7, 33, 1000, 4097, 16385, 65537, 262144 };
  int k = 0;
  const int64_t hi = v->n_max < 262144 ? v->n_max : 262144;
  if (v->n_min > 1) shape[k][0] = rows_for(v->n_min), shape[k++][1] = v->n_min;
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    if (ns[i] >= v->n_min && ns[i] <= hi) shape[k][0] = rows_for(ns[i]), shape[k++][1] = ns[i];
  if (hi == v->n_max && hi != shape[k - 1][1]) shape[k][0] = rows_for(hi), shape[k++][1] = hi;
  /* every CTA (cluster) several rows: 1500, or 300 of a cluster row's length (host memory, time) */
  shape[k][0] = v->n_min > 16384 ? 300 : 1500, shape[k++][1] = v->n_min > 40 ? v->n_min : 40;
  return k;
}

START_TEST(variant_matches_reference)
{
  kite_variant_info v;
  KT_KITE_OK(kite_variant_get(_i, &v));
  int64_t shape[16][2];
  const int ns = variant_shapes(&v, shape);
  double worst = 0;
  char what[256];
  const int ln = strcmp(v.op, "layernorm_bwd") == 0;
  for (int k = 0; k < ns; k++) {
    nproblem p = np_new(ln, v.dtype, shape[k][0], shape[k][1], v.align == 16, k % 2 && !ln ? 1.f : 0.f,
                        NOT_IN_PLACE, v.name, k);
    snprintf(what, sizeof what, "%s M=%lld N=%lld ld=%lld", v.name, (long long)p.M, (long long)p.N,
             (long long)p.ld);
    np_reset(&p);
    kite_row_args a = np_args(&p);
    KT_KITE_OK(kite_run_variant(v.name, &a, 0));
    const outputs first = np_download(&p);
    worst = fmax(worst, np_check(&p, &first, what));
    np_reset(&p);
    KT_KITE_OK(kite_run_variant(v.name, &a, 0));
    const outputs again = np_download(&p);
    ck_assert_msg(memcmp(first.dx, again.dx, p.bytes) == 0, "%s: dx differs between two runs", what);
    ck_assert_msg(memcmp(first.dw, again.dw, (size_t)p.N * sizeof(float)) == 0, "%s: dw differs between two runs",
                  what);
    ck_assert_msg(memcmp(first.db, again.db, (size_t)p.N * sizeof(float)) == 0, "%s: db differs between two runs",
                  what);
    p.sums = ln && k % 2 ? SUM_DB : 0;   /* dx alone (or with db alone): the same bytes, dw untouched */
    np_reset(&p);
    a = np_args(&p);
    KT_KITE_OK(kite_run_variant(v.name, &a, 0));
    const outputs alone = np_download(&p);
    np_check(&p, &alone, what);
    ck_assert_msg(memcmp(first.dx, alone.dx, p.bytes) == 0, "%s: dx without dw differs", what);
    if (p.sums & SUM_DB)
      ck_assert_msg(memcmp(first.db, alone.db, (size_t)p.N * sizeof(float)) == 0, "%s: db without dw differs", what);
    kt_free_all();
  }
  printf("%-50s %2d shapes, worst error %.3f of tolerance\n", v.name, ns, worst);
}
END_TEST

/* ---- the entry point ------------------------------------------------------------------ */

static const struct { int64_t M, N; float w_offset; int inplace; } entry_cases[] = {
  { 300, 1000, 0.f, NOT_IN_PLACE }, { 2000, 64, 1.f, NOT_IN_PLACE }, { 37, 4096, 1.f, DX_IS_DY },
  { 5, 16385, 0.f, DX_IS_X },       { 3, 70001, 1.f, NOT_IN_PLACE }, { 1, 262144, 0.f, DX_IS_DY },
  { 4000, 8, 0.f, DX_IS_X },        { 9, 12288, 1.f, NOT_IN_PLACE },
  /* more partial rows in the workspace than CTAs fit the GPU at once: the launch takes fewer */
  { 40000, 40, 0.f, NOT_IN_PLACE },
};
#define N_ENTRY ((int)(sizeof entry_cases / sizeof entry_cases[0]))

/* _i: the dtype and case; layernorm_bwd's cases (_i past rmsnorm_bwd's) ask
   for dw and db, dw alone or db alone in turn. */
START_TEST(entry_point)
{
  const int ln = _i >= N_ENTRY * 3, i = _i % (N_ENTRY * 3);
  const kite_dtype dt = dtypes[i % 3];
  const int c = i / 3;
  nproblem p = np_new(ln, dt, entry_cases[c].M, entry_cases[c].N, c % 2 == 0, ln ? 0.f : entry_cases[c].w_offset,
                      entry_cases[c].inplace, "entry", _i);
  if (ln) p.sums = c % 3 == 0 ? SUM_DW | SUM_DB : c % 3 == 1 ? SUM_DW : SUM_DB;
  const char *op = ln ? "layernorm_bwd" : "rmsnorm_bwd";
  char what[400], why[256];
  KT_KITE_OK(kite_explain(op, dt, p.M, p.N, 0, why, sizeof why));
  snprintf(what, sizeof what, "kite_%s %s M=%lld N=%lld%s%s%s (%s)", op, kt_dtype_name(dt), (long long)p.M,
           (long long)p.N, p.inplace ? " in place" : "", p.sums & SUM_DW ? " dw" : "", p.sums & SUM_DB ? " db" : "",
           why);
  np_reset(&p);
  KT_KITE_OK(np_entry(&p));
  const outputs o = np_download(&p);
  printf("%s: worst error %.3f of tolerance\n", what, np_check(&p, &o, what));
}
END_TEST

/* ---- central differences -------------------------------------------------------------- */

/* sum(y * g) over the rows, y = rmsnorm(x) * w through kite_rmsnorm_fwd (f32). */
static double fwd_loss(int64_t M, int64_t N, const float *x, const float *w, const float *g, float *xd, float *wd,
                       float *yd, float *y)
{
  KT_CUDA_CHECK(cudaMemcpy(xd, x, (size_t)(M * N) * 4, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(wd, w, (size_t)N * 4, cudaMemcpyHostToDevice));
  KT_KITE_OK(kite_rmsnorm_fwd(KITE_F32, M, N, xd, N, wd, EPS, yd, N, NULL, 0));
  KT_CUDA_CHECK(cudaMemcpy(y, yd, (size_t)(M * N) * 4, cudaMemcpyDeviceToHost));
  double l = 0;
  for (int64_t k = 0; k < M * N; k++) l += (double)y[k] * g[k];
  return l;
}

START_TEST(central_differences)
{
  const int64_t M = 3, N = _i == 0 ? 37 : 130;
  const float w_offset = _i == 0 ? 0.f : 1.f, h = 1e-2f;
  kt_rng r = kt_rng_for("diff", _i);
  float *x = kt_halloc((size_t)(M * N) * 4), *g = kt_halloc((size_t)(M * N) * 4), *y = kt_halloc((size_t)(M * N) * 4);
  float *w = kt_halloc((size_t)N * 4), *wf = kt_halloc((size_t)N * 4), *dx = kt_halloc((size_t)(M * N) * 4);
  float *dw = kt_halloc((size_t)N * 4);
  for (int64_t k = 0; k < M * N; k++) x[k] = (float)kt_normal(&r), g[k] = (float)kt_normal(&r);
  for (int64_t j = 0; j < N; j++) w[j] = (float)(1.0 - w_offset + 0.5 * kt_normal(&r)), wf[j] = w[j] + w_offset;
  float *xd = kt_dalloc((size_t)(M * N) * 4), *gd = kt_dalloc((size_t)(M * N) * 4), *yd = kt_dalloc((size_t)(M * N) * 4);
  float *wd = kt_dalloc((size_t)N * 4), *rstdd = kt_dalloc((size_t)M * 4), *dxd = kt_dalloc((size_t)(M * N) * 4);
  float *dwd = kt_dalloc((size_t)N * 4), *wfd = kt_dalloc((size_t)N * 4);
  size_t wsb;
  KT_KITE_OK(kite_rmsnorm_bwd_workspace(M, N, &wsb));
  void *ws = kt_dalloc(wsb);
  /* the forward (weights w + w_offset) for rstd, then the backward with dy = g */
  KT_CUDA_CHECK(cudaMemcpy(xd, x, (size_t)(M * N) * 4, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(gd, g, (size_t)(M * N) * 4, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(wd, w, (size_t)N * 4, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(wfd, wf, (size_t)N * 4, cudaMemcpyHostToDevice));
  KT_KITE_OK(kite_rmsnorm_fwd(KITE_F32, M, N, xd, N, wfd, EPS, yd, N, rstdd, 0));
  KT_KITE_OK(kite_rmsnorm_bwd(KITE_F32, M, N, xd, N, wd, w_offset, rstdd, gd, N, dxd, N, dwd, ws, wsb, 0));
  KT_CUDA_CHECK(cudaMemcpy(dx, dxd, (size_t)(M * N) * 4, cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(dw, dwd, (size_t)N * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int64_t k = 0; k < M * N + N; k++) {
    float *v = k < M * N ? &x[k] : &wf[k - M * N];
    const float keep = *v;
    *v = keep + h;
    const double lp = fwd_loss(M, N, x, wf, g, xd, wfd, yd, y);
    *v = keep - h;
    const double lm = fwd_loss(M, N, x, wf, g, xd, wfd, yd, y);
    *v = keep;
    const double fd = (lp - lm) / (2.0 * (double)h), got = k < M * N ? dx[k] : dw[k - M * N];
    const double tol = 2e-3 * (1.0 + fabs(fd));
    ck_assert_msg(fabs(got - fd) <= tol, "N=%lld w_offset %g: %s[%lld] = %.6g, central difference %.6g",
                  (long long)N, (double)w_offset, k < M * N ? "dx" : "dw", (long long)(k < M * N ? k : k - M * N),
                  got, fd);
    worst = fmax(worst, fabs(got - fd) / tol);
  }
  printf("central differences M=%lld N=%lld w_offset %g: worst error %.3f of tolerance\n", (long long)M,
         (long long)N, (double)w_offset, worst);
}
END_TEST

/* ---- invalid calls -------------------------------------------------------------------- */

START_TEST(invalid_calls_touch_nothing)
{
  nproblem p = np_new(0, KITE_BF16, 5, 1000, 1, 0.f, NOT_IN_PLACE, "invalid", 0);
  np_reset(&p);
  const kite_row_args v = np_args(&p);
  const size_t wsb = p.ws_bytes;
  for (int k = 0;; k++) {
    kite_row_args a = v;
    kite_dtype dt = KITE_BF16;
    void *ws = p.ws;
    size_t bytes = wsb;
    kite_status want = KITE_ERR_INVALID_ARG;
    const char *desc;
    switch (k) {
    case 0: desc = "x NULL"; a.x = NULL; break;
    case 1: desc = "w NULL"; a.w = NULL; break;
    case 2: desc = "rstd NULL"; a.rstd = NULL; break;
    case 3: desc = "dy NULL"; a.dy = NULL; break;
    case 4: desc = "dx NULL"; a.y = NULL; break;
    case 5: desc = "workspace NULL"; ws = NULL; break;
    case 6: desc = "workspace a byte short"; bytes = wsb - 1; break;
    case 7: desc = "workspace 4 bytes off 16"; ws = (char *)ws + 4; bytes = wsb - 16; break;
    case 8: desc = "rstd 2 bytes off"; a.rstd = (float *)((char *)a.rstd + 2); break;
    case 9: desc = "dw 2 bytes off"; a.dw = (float *)((char *)a.dw + 2); break;
    case 10: desc = "ldx = N - 1"; a.ldx = a.N - 1; break;
    case 11: desc = "lddy = N - 1"; a.lddy = a.N - 1; break;
    case 12: desc = "dx one element into x"; a.y = (char *)a.x + 2; a.ldy = a.ldx; break;
    case 13: desc = "dx one element into dy"; a.y = (char *)a.dy + 2; a.ldy = a.lddy; break;
    case 14: desc = "dw inside the workspace"; a.dw = (float *)ws + 4; break;
    case 15: desc = "w_offset NaN"; a.w_offset = NAN; break;
    case 16: desc = "dtype KITE_E4M3"; dt = KITE_E4M3; want = KITE_ERR_UNSUPPORTED; break;
    case 17: desc = "M = -1"; a.M = -1; break;
    case 18: desc = "x one byte off"; a.x = (char *)a.x + 1; break;
    case 19: desc = "dx == dy with another stride"; a.y = (void *)a.dy; a.ldy = a.lddy + 8; break;
    default: desc = NULL;
    }
    if (!desc) break;
    kite__fail(KITE_OK, "%s", "");
    const kite_status s = kite_rmsnorm_bwd(dt, a.M, a.N, a.x, a.ldx, a.w, a.w_offset, a.rstd, a.dy, a.lddy, a.y,
                                           a.ldy, a.dw, ws, bytes, 0);
    ck_assert_msg(s == want, "%s: got %s (%s), want %s", desc, kite_status_str(s), kite_last_error(),
                  kite_status_str(want));
    ck_assert_msg(kite_last_error()[0] != '\0', "%s: no kite_last_error() text", desc);
  }
  size_t b = 0;
  KT_KITE_EXPECT(kite_rmsnorm_bwd_workspace(5, 1000, NULL), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_rmsnorm_bwd_workspace(-1, 1000, &b), KITE_ERR_INVALID_ARG);
  KT_KITE_OK(kite_rmsnorm_bwd_workspace(0, 1000, &b));
  ck_assert_msg(b == 0, "an empty problem asks for %zu bytes", b);
  const outputs o = np_download(&p);
  ck_assert_msg(poisoned(o.dx, 0, p.bytes), "an invalid call wrote dx");
  ck_assert_msg(poisoned(o.dw, 0, (size_t)(p.N + GUARD) * sizeof(float)), "an invalid call wrote dw");
  KT_KITE_OK(np_entry(&p));   /* and the valid call works */
  const outputs ok = np_download(&p);
  np_check(&p, &ok, "the valid call after the invalid ones");
}
END_TEST

/* ---- rmsnorm over a residual stream ----------------------------------------------------- */

enum { H_APART, H_NONE, H_IS_RES, H_IS_X, Y_IS_X_H_IS_RES, Y_IS_X_H_NONE, NO_RESIDUAL, RES_CASES };
static const char *const res_case_names[RES_CASES] = { "h apart", "no h", "h == residual", "h == x",
                                                       "y == x, h == residual", "y == x, no h", "no residual" };

/* One forward problem: x, residual, w on the host; h's bytes and y's reference. */
typedef struct rproblem {
  kite_dtype dt;
  int64_t M, N, ld, off;
  float w_offset;
  int how;                 /* a res_case */
  size_t bytes;
  void *xh, *rh, *wh, *hh; /* hh: x + residual rounded to the dtype (x alone without a residual) */
  void *xa, *ra, *ya, *ha, *wd;
  float *rstdd;
  double *y_ref, *rstd_ref;
} rproblem;

static double fy_rtol(kite_dtype d) { return d == KITE_BF16 ? 1.6e-2 : d == KITE_F16 ? 2e-3 : 1e-5; }

static rproblem rp_new(kite_dtype dt, int64_t M, int64_t N, int aligned, float w_offset, int how, const char *tag,
                       int64_t seq)
{
  rproblem p;
  memset(&p, 0, sizeof p);
  p.dt = dt, p.M = M, p.N = N, p.w_offset = w_offset, p.how = how;
  p.ld = aligned ? round_up(N, 8) + 8 : N + 3;
  p.off = aligned ? 8 : 1;
  const int es = kt_dtype_size(dt);
  p.bytes = (size_t)(p.off + (M - 1) * p.ld + N + GUARD) * (size_t)es;
  kt_rng r = kt_rng_for(tag, seq);
  p.xh = kt_halloc(p.bytes), p.rh = kt_halloc(p.bytes), p.hh = kt_halloc(p.bytes), p.wh = kt_halloc((size_t)N * es);
  memset(p.xh, 0, p.bytes);
  memset(p.rh, 0, p.bytes);
  memset(p.hh, POISON, p.bytes);
  p.y_ref = kt_halloc((size_t)(M * N) * sizeof(double));
  p.rstd_ref = kt_halloc((size_t)M * sizeof(double));
  for (int64_t j = 0; j < N; j++) kt_store(dt, p.wh, j, (float)(1.0 - w_offset + 0.5 * kt_normal(&r)));
  for (int64_t i = 0; i < M; i++) {
    double ss = 0;
    for (int64_t j = 0; j < N; j++) {
      const int64_t e = p.off + i * p.ld + j;
      const float x = kt_store(dt, p.xh, e, (float)kt_normal(&r));
      const float res = how == NO_RESIDUAL ? 0.f : kt_store(dt, p.rh, e, (float)(2.0 * kt_normal(&r)));
      const double h = how == NO_RESIDUAL ? x : kt_store(dt, p.hh, e, x + res);
      ss += h * h;
    }
    p.rstd_ref[i] = 1.0 / sqrt(ss / (double)N + EPS);
    for (int64_t j = 0; j < N; j++) {
      const int64_t e = p.off + i * p.ld + j;
      const double h = how == NO_RESIDUAL ? kt_load(dt, p.xh, e) : kt_load(dt, p.hh, e);
      p.y_ref[i * N + j] = h * p.rstd_ref[i] * ((double)kt_load(dt, p.wh, j) + w_offset);
    }
  }
  p.xa = kt_dalloc(p.bytes), p.ra = kt_dalloc(p.bytes), p.wd = kt_dalloc((size_t)N * es);
  p.rstdd = kt_dalloc((size_t)M * sizeof(float));
  p.ya = how == Y_IS_X_H_IS_RES || how == Y_IS_X_H_NONE ? p.xa : kt_dalloc(p.bytes);
  p.ha = how == H_APART ? kt_dalloc(p.bytes) : how == H_IS_X ? p.xa
       : how == H_IS_RES || how == Y_IS_X_H_IS_RES ? p.ra : NULL;
  return p;
}

static void rp_reset(rproblem *p)
{
  if (p->ya != p->xa) KT_CUDA_CHECK(cudaMemset(p->ya, POISON, p->bytes));
  if (p->ha && p->ha != p->xa && p->ha != p->ra) KT_CUDA_CHECK(cudaMemset(p->ha, POISON, p->bytes));
  KT_CUDA_CHECK(cudaMemcpy(p->xa, p->xh, p->bytes, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(p->ra, p->rh, p->bytes, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(p->wd, p->wh, (size_t)p->N * kt_dtype_size(p->dt), cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemset(p->rstdd, POISON, (size_t)p->M * sizeof(float)));
}

static kite_row_args rp_args(const rproblem *p)
{
  kite_row_args a;
  memset(&a, 0, sizeof a);
  a.M = p->M, a.N = p->N, a.eps = EPS, a.w = p->wd, a.w_offset = p->w_offset, a.rstd = p->rstdd;
  const int64_t off = p->off * kt_dtype_size(p->dt);
  a.x = (char *)p->xa + off, a.ldx = p->ld;
  a.y = (char *)p->ya + off, a.ldy = p->ld;
  if (p->how != NO_RESIDUAL) a.res = (char *)p->ra + off, a.ldres = p->ld;
  if (p->ha) a.h = (char *)p->ha + off, a.ldh = p->ld;
  return a;
}

static kite_status rp_entry(const rproblem *p)
{
  const kite_row_args a = rp_args(p);
  return kite_rmsnorm_fwd_residual(p->dt, a.M, a.N, a.x, a.ldx, a.res, a.ldres, a.w, a.w_offset, a.eps, a.y, a.ldy,
                                   a.h, a.ldh, a.rstd, 0);
}

/* y and rstd within tolerance, h the exact bytes of the rounded sum; y's and
   h's own buffers untouched outside their rows.  Returns y's worst error over
   tolerance; *ybuf gets y's bytes (for a second run's comparison). */
static double rp_check(const rproblem *p, const char *what, unsigned char **ybuf)
{
  const int es = kt_dtype_size(p->dt);
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned char *y = kt_halloc(p->bytes), *h = kt_halloc(p->bytes);
  float *rstd = kt_halloc((size_t)p->M * sizeof(float));
  KT_CUDA_CHECK(cudaMemcpy(y, p->ya, p->bytes, cudaMemcpyDeviceToHost));
  if (p->ha) KT_CUDA_CHECK(cudaMemcpy(h, p->ha, p->bytes, cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(rstd, p->rstdd, (size_t)p->M * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int64_t i = 0; i < p->M; i++) {
    const double rq = fabs(rstd[i] - p->rstd_ref[i]) / (1e-5 * p->rstd_ref[i]);
    ck_assert_msg(rq <= 1.0, "%s: rstd[%lld] = %.9g, want %.9g", what, (long long)i, (double)rstd[i],
                  p->rstd_ref[i]);
    for (int64_t j = 0; j < p->N; j++) {
      const int64_t e = p->off + i * p->ld + j;
      const double got = kt_load(p->dt, y, e), ref = p->y_ref[i * p->N + j];
      const double tol = fy_rtol(p->dt) * fabs(ref) + 1e-6 * p->rstd_ref[i] + kt_out_atol(p->dt) + 1e-30;
      KT_EXPECT(fabs(got - ref) <= tol, "%s: y[%lld][%lld] = %.9g, want %.9g", what, (long long)i, (long long)j,
                got, ref);
      worst = fmax(worst, fabs(got - ref) / tol);
      if (p->ha)
        KT_EXPECT(memcmp(h + e * es, (unsigned char *)p->hh + e * es, (size_t)es) == 0,
                  "%s: h[%lld][%lld] = %.9g, want x + residual = %.9g", what, (long long)i, (long long)j,
                  (double)kt_load(p->dt, h, e), (double)kt_load(p->dt, p->hh, e));
    }
    if (p->ya != p->xa && i + 1 < p->M)
      ck_assert_msg(poisoned(y, (size_t)(p->off + i * p->ld + p->N) * es, (size_t)(p->off + (i + 1) * p->ld) * es),
                    "%s: y's row padding was written", what);
    if (p->how == H_APART && i + 1 < p->M)
      ck_assert_msg(poisoned(h, (size_t)(p->off + i * p->ld + p->N) * es, (size_t)(p->off + (i + 1) * p->ld) * es),
                    "%s: h's row padding was written", what);
  }
  if (p->ya != p->xa)
    ck_assert_msg(poisoned(y, (size_t)(p->off + (p->M - 1) * p->ld + p->N) * es, p->bytes), "%s: y's guard", what);
  if (ybuf) *ybuf = y;
  return worst;
}

START_TEST(residual_variant_matches_reference)
{
  kite_variant_info v;
  KT_KITE_OK(kite_variant_get(_i, &v));
  int64_t shape[16][2];
  const int ns = variant_shapes(&v, shape);
  double worst = 0;
  char what[256];
  for (int k = 0; k < ns; k++) {
    rproblem p = rp_new(v.dtype, shape[k][0], shape[k][1], v.align == 16, k % 2 ? 1.f : 0.f,
                        k % 2 ? H_NONE : H_APART, v.name, k);
    snprintf(what, sizeof what, "%s M=%lld N=%lld %s", v.name, (long long)p.M, (long long)p.N,
             res_case_names[p.how]);
    rp_reset(&p);
    kite_row_args a = rp_args(&p);
    KT_KITE_OK(kite_run_variant(v.name, &a, 0));
    unsigned char *y1, *y2;
    worst = fmax(worst, rp_check(&p, what, &y1));
    rp_reset(&p);
    KT_KITE_OK(kite_run_variant(v.name, &a, 0));
    rp_check(&p, what, &y2);
    ck_assert_msg(memcmp(y1, y2, p.bytes) == 0, "%s: y differs between two runs", what);
    kt_free_all();
  }
  printf("%-50s %2d shapes, worst error %.3f of tolerance\n", v.name, ns, worst);
}
END_TEST

/* kite_rmsnorm_fwd_residual: every aliasing it allows, and no residual (plain
   rmsnorm with w_offset), over short and long rows. */
START_TEST(residual_entry_point)
{
  const kite_dtype dt = dtypes[_i % 3];
  const int how = _i / 3 % RES_CASES;
  static const int64_t shapes[][2] = { { 300, 1000 }, { 37, 4096 }, { 3, 70001 }, { 2000, 64 } };
  const int sh = _i / 3 / RES_CASES;
  rproblem p = rp_new(dt, shapes[sh][0], shapes[sh][1], sh % 2 == 0, how % 2 ? 1.f : 0.f, how, "res_entry", _i);
  char what[200];
  snprintf(what, sizeof what, "kite_rmsnorm_fwd_residual %s M=%lld N=%lld %s", kt_dtype_name(dt), (long long)p.M,
           (long long)p.N, res_case_names[how]);
  rp_reset(&p);
  KT_KITE_OK(rp_entry(&p));
  printf("%s: worst error %.3f of tolerance\n", what, rp_check(&p, what, NULL));
}
END_TEST

START_TEST(residual_invalid_calls_touch_nothing)
{
  rproblem p = rp_new(KITE_BF16, 5, 1000, 1, 0.f, H_APART, "res_invalid", 0);
  rp_reset(&p);
  const int es = 2;
  for (int k = 0;; k++) {
    kite_row_args a = rp_args(&p);
    const char *desc;
    switch (k) {
    case 0: desc = "h without a residual"; a.res = NULL; break;
    case 1: desc = "ldres = N - 1"; a.ldres = a.N - 1; break;
    case 2: desc = "ldh = N - 1"; a.ldh = a.N - 1; break;
    case 3: desc = "residual one byte off"; a.res = (const char *)a.res + 1; break;
    case 4: desc = "h one byte off"; a.h = (char *)a.h + 1; break;
    case 5: desc = "h one element into x"; a.h = (char *)a.x + es; a.ldh = a.ldx; break;
    case 6: desc = "h one element into the residual"; a.h = (char *)a.res + es; a.ldh = a.ldres; break;
    case 7: desc = "y on the residual"; a.y = (void *)a.res; a.ldy = a.ldres; break;
    case 8: desc = "y == h"; a.y = a.h; a.ldy = a.ldh; break;
    case 9: desc = "w_offset NaN"; a.w_offset = NAN; break;
    case 10: desc = "x NULL"; a.x = NULL; break;
    case 11: desc = "h == x with another stride"; a.h = (void *)a.x; a.ldh = a.ldx + 8; break;
    default: desc = NULL;
    }
    if (!desc) break;
    kite__fail(KITE_OK, "%s", "");
    const kite_status s = kite_rmsnorm_fwd_residual(KITE_BF16, a.M, a.N, a.x, a.ldx, a.res, a.ldres, a.w, a.w_offset,
                                                    a.eps, a.y, a.ldy, a.h, a.ldh, a.rstd, 0);
    ck_assert_msg(s == KITE_ERR_INVALID_ARG, "%s: got %s (%s)", desc, kite_status_str(s), kite_last_error());
  }
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned char *y = kt_halloc(p.bytes), *h = kt_halloc(p.bytes);
  KT_CUDA_CHECK(cudaMemcpy(y, p.ya, p.bytes, cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(h, p.ha, p.bytes, cudaMemcpyDeviceToHost));
  ck_assert_msg(poisoned(y, 0, p.bytes) && poisoned(h, 0, p.bytes), "an invalid call wrote y or h");
  KT_KITE_OK(rp_entry(&p));
  rp_check(&p, "the valid call after the invalid ones", NULL);
}
END_TEST

/* ---- layernorm forward ------------------------------------------------------------------ */

/* One layernorm problem: x around an offset (the mean matters), w, b; references. */
typedef struct lproblem {
  kite_dtype dt;
  int64_t M, N, ld, off;
  int with_b, with_stats, inplace;
  size_t bytes;
  void *xh, *wh, *bh;
  void *xa, *ya, *wd, *bd;
  float *meand, *rstdd;
  double *y_ref, *y_tol, *mean_ref, *mean_tol, *rstd_ref;
} lproblem;

static lproblem lp_new(kite_dtype dt, int64_t M, int64_t N, int aligned, int with_b, int with_stats, int inplace,
                       const char *tag, int64_t seq)
{
  lproblem p;
  memset(&p, 0, sizeof p);
  p.dt = dt, p.M = M, p.N = N, p.with_b = with_b, p.with_stats = with_stats, p.inplace = inplace;
  p.ld = aligned ? round_up(N, 8) + 8 : N + 3;
  p.off = aligned ? 8 : 1;
  const int es = kt_dtype_size(dt);
  p.bytes = (size_t)(p.off + (M - 1) * p.ld + N + GUARD) * (size_t)es;
  kt_rng r = kt_rng_for(tag, seq);
  p.xh = kt_halloc(p.bytes), p.wh = kt_halloc((size_t)N * es), p.bh = kt_halloc((size_t)N * es);
  memset(p.xh, 0, p.bytes);
  p.y_ref = kt_halloc((size_t)(M * N) * sizeof(double)), p.y_tol = kt_halloc((size_t)(M * N) * sizeof(double));
  p.mean_ref = kt_halloc((size_t)M * sizeof(double)), p.mean_tol = kt_halloc((size_t)M * sizeof(double));
  p.rstd_ref = kt_halloc((size_t)M * sizeof(double));
  double wmax = 0;
  for (int64_t j = 0; j < N; j++) {
    wmax = fmax(wmax, fabs(kt_store(dt, p.wh, j, (float)(1.0 + 0.5 * kt_normal(&r)))));
    kt_store(dt, p.bh, j, with_b ? (float)(0.5 * kt_normal(&r)) : 0.f);
  }
  for (int64_t i = 0; i < M; i++) {
    /* every fifth row, the second first (3 rows of the longest), far off
       centre (200 +- 4, spread e^+-1): a variance taken as E[x^2] - mean^2
       in floats loses rstd's tolerance there */
    const double far = i % 5 == 1 ? 200.0 : 0.0;
    const double shift = far + 8.0 * kt_uniform(&r) - 4.0, scale = exp(2.0 * kt_uniform(&r) - 1.0);
    double sum = 0, xmax = 0;
    for (int64_t j = 0; j < N; j++) {
      const double v = kt_store(dt, p.xh, p.off + i * p.ld + j, (float)(shift + scale * kt_normal(&r)));
      sum += v;
      xmax = fmax(xmax, fabs(v));
    }
    const double mean = sum / (double)N;
    double var = 0;
    for (int64_t j = 0; j < N; j++) {
      const double d = kt_load(dt, p.xh, p.off + i * p.ld + j) - mean;
      var += d * d;
    }
    const double rs = 1.0 / sqrt(var / (double)N + EPS);
    p.mean_ref[i] = mean, p.rstd_ref[i] = rs;
    p.mean_tol[i] = 1e-5 * xmax + 1e-30;
    for (int64_t j = 0; j < N; j++) {
      const double x = kt_load(dt, p.xh, p.off + i * p.ld + j);
      const double ref = (x - mean) * rs * kt_load(dt, p.wh, j) + kt_load(dt, p.bh, j);
      p.y_ref[i * N + j] = ref;
      p.y_tol[i * N + j] = fy_rtol(dt) * fabs(ref) + 3e-5 * rs * xmax * wmax + kt_out_atol(dt) + 1e-30;
    }
  }
  p.xa = kt_dalloc(p.bytes), p.wd = kt_dalloc((size_t)N * es), p.bd = kt_dalloc((size_t)N * es);
  p.ya = inplace ? p.xa : kt_dalloc(p.bytes);
  p.meand = kt_dalloc((size_t)M * sizeof(float)), p.rstdd = kt_dalloc((size_t)M * sizeof(float));
  return p;
}

static void lp_reset(lproblem *p)
{
  if (!p->inplace) KT_CUDA_CHECK(cudaMemset(p->ya, POISON, p->bytes));
  KT_CUDA_CHECK(cudaMemcpy(p->xa, p->xh, p->bytes, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(p->wd, p->wh, (size_t)p->N * kt_dtype_size(p->dt), cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(p->bd, p->bh, (size_t)p->N * kt_dtype_size(p->dt), cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemset(p->meand, POISON, (size_t)p->M * sizeof(float)));
  KT_CUDA_CHECK(cudaMemset(p->rstdd, POISON, (size_t)p->M * sizeof(float)));
}

static kite_row_args lp_args(const lproblem *p)
{
  kite_row_args a;
  memset(&a, 0, sizeof a);
  const int64_t off = p->off * kt_dtype_size(p->dt);
  a.M = p->M, a.N = p->N, a.eps = EPS, a.w = p->wd, a.b = p->with_b ? p->bd : NULL;
  a.x = (char *)p->xa + off, a.ldx = p->ld, a.y = (char *)p->ya + off, a.ldy = p->ld;
  if (p->with_stats) a.mean = p->meand, a.rstd = p->rstdd;
  return a;
}

/* y, mean and rstd within tolerance (mean and rstd untouched when not asked
   for); y's padding and guard untouched.  Returns y's worst error over tolerance. */
static double lp_check(const lproblem *p, const char *what, unsigned char **ybuf)
{
  const int es = kt_dtype_size(p->dt);
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned char *y = kt_halloc(p->bytes);
  float *mean = kt_halloc((size_t)p->M * sizeof(float)), *rstd = kt_halloc((size_t)p->M * sizeof(float));
  KT_CUDA_CHECK(cudaMemcpy(y, p->ya, p->bytes, cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(mean, p->meand, (size_t)p->M * sizeof(float), cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(rstd, p->rstdd, (size_t)p->M * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int64_t i = 0; i < p->M; i++) {
    if (p->with_stats) {
      ck_assert_msg(fabs(mean[i] - p->mean_ref[i]) <= p->mean_tol[i], "%s: mean[%lld] = %.9g, want %.9g", what,
                    (long long)i, (double)mean[i], p->mean_ref[i]);
      ck_assert_msg(fabs(rstd[i] - p->rstd_ref[i]) <= 3e-5 * p->rstd_ref[i], "%s: rstd[%lld] = %.9g, want %.9g",
                    what, (long long)i, (double)rstd[i], p->rstd_ref[i]);
    }
    for (int64_t j = 0; j < p->N; j++) {
      const double got = kt_load(p->dt, y, p->off + i * p->ld + j), ref = p->y_ref[i * p->N + j];
      const double q = fabs(got - ref) / p->y_tol[i * p->N + j];
      KT_EXPECT(q <= 1.0, "%s: y[%lld][%lld] = %.9g, want %.9g", what, (long long)i, (long long)j, got, ref);
      worst = fmax(worst, q);
    }
    if (!p->inplace && i + 1 < p->M)
      ck_assert_msg(poisoned(y, (size_t)(p->off + i * p->ld + p->N) * es, (size_t)(p->off + (i + 1) * p->ld) * es),
                    "%s: y's row padding was written", what);
  }
  if (!p->inplace)
    ck_assert_msg(poisoned(y, (size_t)(p->off + (p->M - 1) * p->ld + p->N) * es, p->bytes), "%s: y's guard", what);
  if (!p->with_stats)
    ck_assert_msg(poisoned((unsigned char *)mean, 0, (size_t)p->M * 4) && poisoned((unsigned char *)rstd, 0,
                                                                                   (size_t)p->M * 4),
                  "%s: mean or rstd written though not asked for", what);
  if (ybuf) *ybuf = y;
  return worst;
}

START_TEST(layernorm_variant_matches_reference)
{
  kite_variant_info v;
  KT_KITE_OK(kite_variant_get(_i, &v));
  int64_t shape[16][2];
  const int ns = variant_shapes(&v, shape);
  double worst = 0;
  char what[256];
  for (int k = 0; k < ns; k++) {
    lproblem p = lp_new(v.dtype, shape[k][0], shape[k][1], v.align == 16, k % 2 == 0, k % 3 != 1, 0, v.name, k);
    snprintf(what, sizeof what, "%s M=%lld N=%lld%s%s", v.name, (long long)p.M, (long long)p.N,
             p.with_b ? " b" : "", p.with_stats ? " stats" : "");
    lp_reset(&p);
    kite_row_args a = lp_args(&p);
    KT_KITE_OK(kite_run_variant(v.name, &a, 0));
    unsigned char *y1, *y2;
    worst = fmax(worst, lp_check(&p, what, &y1));
    lp_reset(&p);
    KT_KITE_OK(kite_run_variant(v.name, &a, 0));
    lp_check(&p, what, &y2);
    ck_assert_msg(memcmp(y1, y2, p.bytes) == 0, "%s: y differs between two runs", what);
    kt_free_all();
  }
  printf("%-50s %2d shapes, worst error %.3f of tolerance\n", v.name, ns, worst);
}
END_TEST

START_TEST(layernorm_entry_point)
{
  static const struct { int64_t M, N; int b, stats, inplace; } cases[] = {
    { 300, 1000, 1, 1, 0 }, { 37, 4096, 0, 1, 0 }, { 3, 70001, 1, 0, 1 }, { 2000, 64, 0, 0, 0 }, { 5, 16385, 1, 1, 1 },
  };
  const kite_dtype dt = dtypes[_i % 3];
  const int c = _i / 3;
  lproblem p = lp_new(dt, cases[c].M, cases[c].N, c % 2 == 0, cases[c].b, cases[c].stats, cases[c].inplace,
                      "ln_entry", _i);
  const kite_row_args a = lp_args(&p);
  char what[160];
  snprintf(what, sizeof what, "kite_layernorm_fwd %s M=%lld N=%lld%s%s%s", kt_dtype_name(dt), (long long)p.M,
           (long long)p.N, p.with_b ? " b" : "", p.with_stats ? " stats" : "", p.inplace ? " in place" : "");
  lp_reset(&p);
  KT_KITE_OK(kite_layernorm_fwd(dt, a.M, a.N, a.x, a.ldx, a.w, a.b, a.eps, a.y, a.ldy, a.mean, a.rstd, 0));
  printf("%s: worst error %.3f of tolerance\n", what, lp_check(&p, what, NULL));
}
END_TEST

START_TEST(layernorm_invalid_calls_touch_nothing)
{
  lproblem p = lp_new(KITE_BF16, 5, 1000, 1, 1, 1, 0, "ln_invalid", 0);
  lp_reset(&p);
  for (int k = 0;; k++) {
    kite_row_args a = lp_args(&p);
    const char *desc;
    switch (k) {
    case 0: desc = "w NULL"; a.w = NULL; break;
    case 1: desc = "b one byte off"; a.b = (const char *)a.b + 1; break;
    case 2: desc = "mean 2 bytes off"; a.mean = (float *)((char *)a.mean + 2); break;
    case 3: desc = "eps NaN"; a.eps = NAN; break;
    case 4: desc = "y one element into x"; a.y = (char *)a.x + 2; break;
    case 5: desc = "ldy = N - 1"; a.ldy = a.N - 1; break;
    default: desc = NULL;
    }
    if (!desc) break;
    const kite_status s = kite_layernorm_fwd(KITE_BF16, a.M, a.N, a.x, a.ldx, a.w, a.b, a.eps, a.y, a.ldy, a.mean,
                                             a.rstd, 0);
    ck_assert_msg(s == KITE_ERR_INVALID_ARG, "%s: got %s (%s)", desc, kite_status_str(s), kite_last_error());
  }
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned char *y = kt_halloc(p.bytes);
  KT_CUDA_CHECK(cudaMemcpy(y, p.ya, p.bytes, cudaMemcpyDeviceToHost));
  ck_assert_msg(poisoned(y, 0, p.bytes), "an invalid call wrote y");
  const kite_row_args a = lp_args(&p);
  KT_KITE_OK(kite_layernorm_fwd(KITE_BF16, a.M, a.N, a.x, a.ldx, a.w, a.b, a.eps, a.y, a.ldy, a.mean, a.rstd, 0));
  lp_check(&p, "the valid call after the invalid ones", NULL);
}
END_TEST

/* ---- layernorm's backward: central differences, invalid calls --------------------------- */

/* sum(y * g) over the rows, y = layernorm(x) * w + b through kite_layernorm_fwd (f32); v holds x, then
   w, then b on the host, d their device copies (the same layout). */
static double ln_loss(int64_t M, int64_t N, const float *v, float *d, const float *g, float *yd, float *y)
{
  KT_CUDA_CHECK(cudaMemcpy(d, v, (size_t)(M * N + 2 * N) * 4, cudaMemcpyHostToDevice));
  KT_KITE_OK(kite_layernorm_fwd(KITE_F32, M, N, d, N, d + M * N, d + M * N + N, EPS, yd, N, NULL, NULL, 0));
  KT_CUDA_CHECK(cudaMemcpy(y, yd, (size_t)(M * N) * 4, cudaMemcpyDeviceToHost));
  double l = 0;
  for (int64_t k = 0; k < M * N; k++) l += (double)y[k] * g[k];
  return l;
}

START_TEST(layernorm_central_differences)
{
  const int64_t M = 3, N = _i == 0 ? 37 : 130, n = M * N + 2 * N;
  const float h = 1e-2f;
  kt_rng r = kt_rng_for("lnb_diff", _i);
  float *v = kt_halloc((size_t)n * 4), *g = kt_halloc((size_t)(M * N) * 4), *y = kt_halloc((size_t)(M * N) * 4);
  float *grad = kt_halloc((size_t)n * 4);   /* dx, dw, db: v's layout */
  for (int64_t k = 0; k < M * N; k++) v[k] = (float)(kt_normal(&r) + 0.5), g[k] = (float)kt_normal(&r);
  for (int64_t j = 0; j < N; j++) v[M * N + j] = (float)(1.0 + 0.5 * kt_normal(&r)), v[M * N + N + j] = (float)kt_normal(&r);
  float *d = kt_dalloc((size_t)n * 4), *gd = kt_dalloc((size_t)(M * N) * 4), *yd = kt_dalloc((size_t)(M * N) * 4);
  float *meand = kt_dalloc((size_t)M * 4), *rstdd = kt_dalloc((size_t)M * 4), *gradd = kt_dalloc((size_t)n * 4);
  size_t wsb;
  KT_KITE_OK(kite_layernorm_bwd_workspace(M, N, &wsb));
  void *ws = kt_dalloc(wsb);
  KT_CUDA_CHECK(cudaMemcpy(d, v, (size_t)n * 4, cudaMemcpyHostToDevice));
  KT_CUDA_CHECK(cudaMemcpy(gd, g, (size_t)(M * N) * 4, cudaMemcpyHostToDevice));
  KT_KITE_OK(kite_layernorm_fwd(KITE_F32, M, N, d, N, d + M * N, d + M * N + N, EPS, yd, N, meand, rstdd, 0));
  KT_KITE_OK(kite_layernorm_bwd(KITE_F32, M, N, d, N, d + M * N, meand, rstdd, gd, N, gradd, N, gradd + M * N,
                                gradd + M * N + N, ws, wsb, 0));
  KT_CUDA_CHECK(cudaMemcpy(grad, gradd, (size_t)n * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int64_t k = 0; k < n; k++) {
    const float keep = v[k];
    v[k] = keep + h;
    const double lp = ln_loss(M, N, v, d, g, yd, y);
    v[k] = keep - h;
    const double lm = ln_loss(M, N, v, d, g, yd, y);
    v[k] = keep;
    const double fd = (lp - lm) / (2.0 * (double)h), tol = 2e-3 * (1.0 + fabs(fd));
    const char *name = k < M * N ? "dx" : k < M * N + N ? "dw" : "db";
    ck_assert_msg(fabs(grad[k] - fd) <= tol, "N=%lld: %s[%lld] = %.6g, central difference %.6g", (long long)N, name,
                  (long long)(k < M * N ? k : (k - M * N) % N), (double)grad[k], fd);
    worst = fmax(worst, fabs(grad[k] - fd) / tol);
  }
  printf("layernorm central differences M=%lld N=%lld: worst error %.3f of tolerance\n", (long long)M, (long long)N,
         worst);
}
END_TEST

START_TEST(layernorm_bwd_invalid_calls_touch_nothing)
{
  nproblem p = np_new(1, KITE_BF16, 5, 1000, 1, 0.f, NOT_IN_PLACE, "lnb_invalid", 0);
  np_reset(&p);
  const kite_row_args v = np_args(&p);
  const size_t wsb = p.ws_bytes, one = wsb / 2;   /* one partial row per CTA: dw's alone */
  for (int k = 0;; k++) {
    kite_row_args a = v;
    void *ws = p.ws;
    size_t bytes = wsb;
    const char *desc;
    switch (k) {
    case 0: desc = "mean NULL"; a.mean = NULL; break;
    case 1: desc = "rstd NULL"; a.rstd = NULL; break;
    case 2: desc = "w NULL"; a.w = NULL; break;
    case 3: desc = "workspace NULL with db alone"; a.dw = NULL; ws = NULL; break;
    case 4: desc = "workspace for one sum only"; bytes = one; break;
    case 5: desc = "db 2 bytes off"; a.db = (float *)((char *)a.db + 2); break;
    case 6: desc = "db inside the workspace"; a.db = (float *)ws + wsb / sizeof(float) - 8; break;
    case 7: desc = "db overlapping dw"; a.db = a.dw + 3; break;
    case 8: desc = "mean 2 bytes off"; a.mean = (float *)((char *)a.mean + 2); break;
    case 9: desc = "dx one element into dy"; a.y = (char *)a.dy + 2; a.ldy = a.lddy; break;
    default: desc = NULL;
    }
    if (!desc) break;
    kite__fail(KITE_OK, "%s", "");
    const kite_status s = kite_layernorm_bwd(KITE_BF16, a.M, a.N, a.x, a.ldx, a.w, a.mean, a.rstd, a.dy, a.lddy, a.y,
                                             a.ldy, a.dw, a.db, ws, bytes, 0);
    ck_assert_msg(s == KITE_ERR_INVALID_ARG, "%s: got %s (%s), want %s", desc, kite_status_str(s), kite_last_error(),
                  kite_status_str(KITE_ERR_INVALID_ARG));
    ck_assert_msg(kite_last_error()[0] != '\0', "%s: no kite_last_error() text", desc);
  }
  size_t b = 0;
  KT_KITE_EXPECT(kite_layernorm_bwd_workspace(5, 1000, NULL), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_layernorm_bwd_workspace(-1, 1000, &b), KITE_ERR_INVALID_ARG);
  const outputs o = np_download(&p);
  ck_assert_msg(poisoned(o.dx, 0, p.bytes), "an invalid call wrote dx");
  ck_assert_msg(poisoned(o.dw, 0, (size_t)(p.N + GUARD) * sizeof(float)), "an invalid call wrote dw");
  ck_assert_msg(poisoned(o.db, 0, (size_t)(p.N + GUARD) * sizeof(float)), "an invalid call wrote db");
  KT_KITE_OK(np_entry(&p));   /* and the valid call works */
  const outputs ok = np_download(&p);
  np_check(&p, &ok, "the valid call after the invalid ones");
}
END_TEST

START_TEST(no_cuda_error_left)
{
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  KT_CUDA_CHECK(cudaGetLastError());
}
END_TEST

int main(void)
{
  Suite *s = suite_create("norm");
  const char *only = getenv("KITE_TEST_ONLY");
  TCase *tv = kt_gpu_tcase(s, "variants");
  tcase_set_timeout(tv, 0);
  for (int32_t i = 0; i < kite_variant_count(); i++) {
    kite_variant_info info;
    if (kite_variant_get(i, &info) != KITE_OK || (only && fnmatch(only, info.name, 0) != 0)) continue;
    if (strcmp(info.op, "rmsnorm_bwd") == 0 || strcmp(info.op, "layernorm_bwd") == 0)
      KT_ADD_LOOP(tv, variant_matches_reference, i, i + 1);
    if (strcmp(info.op, "rmsnorm_res") == 0) KT_ADD_LOOP(tv, residual_variant_matches_reference, i, i + 1);
    if (strcmp(info.op, "layernorm") == 0) KT_ADD_LOOP(tv, layernorm_variant_matches_reference, i, i + 1);
  }
  if (!only) {
    KT_ADD_LOOP(kt_gpu_tcase(s, "entry"), entry_point, 0, N_ENTRY * 3);
    KT_ADD_LOOP(kt_gpu_tcase(s, "lnb_entry"), entry_point, N_ENTRY * 3, N_ENTRY * 6);
    KT_ADD_LOOP(kt_gpu_tcase(s, "lnb_diff"), layernorm_central_differences, 0, 2);
    KT_ADD_LOOP(kt_gpu_tcase(s, "lnb_invalid"), layernorm_bwd_invalid_calls_touch_nothing, 0, 1);
    KT_ADD_LOOP(kt_gpu_tcase(s, "diff"), central_differences, 0, 2);
    KT_ADD_LOOP(kt_gpu_tcase(s, "invalid"), invalid_calls_touch_nothing, 0, 1);
    KT_ADD_LOOP(kt_gpu_tcase(s, "res_entry"), residual_entry_point, 0, 3 * RES_CASES * 4);
    KT_ADD_LOOP(kt_gpu_tcase(s, "res_invalid"), residual_invalid_calls_touch_nothing, 0, 1);
    KT_ADD_LOOP(kt_gpu_tcase(s, "ln_entry"), layernorm_entry_point, 0, 5 * 3);
    KT_ADD_LOOP(kt_gpu_tcase(s, "ln_invalid"), layernorm_invalid_calls_touch_nothing, 0, 1);
  }
  KT_ADD_LOOP(kt_gpu_tcase(s, "final"), no_cuda_error_left, 0, 1);
  char why[256];
  if (!kt_gpu_usable(why, sizeof why)) {
    printf("KITE_SKIPPED: %d (no CUDA device: %s)\n", *kt_ncases(), why);
    srunner_free(srunner_create(s));
    return EXIT_SUCCESS;
  }
  kt_seed();
  kt_backtrace_on_crash();
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_ENV);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
