/* test_gpu.c - kite's kernels on a GPU, against a float64 reference on the host.
 *
 * Without a usable sm_90 device it prints one line,
 *     KITE_SKIPPED: <number of GPU test cases> (no CUDA device: <reason>)
 * and exits 0 without running a case.  Otherwise (Check, CK_NOFORK: CUDA and
 * fork do not mix):
 *   variants      every row-op variant (test_gemm runs the gemm ones)
 *                 through kite_run_variant, at sizes from 1 to 262144
 *                 within its N range, with padded row strides
 *                 and, for element-wise variants, odd strides and unaligned
 *                 bases; outputs poisoned first, every element checked
 *                 written, padding and guards checked untouched, inputs
 *                 unchanged, a second run byte-identical, a row alone
 *                 byte-identical to the same row in a batch
 *   entry         the public entry points at every dispatch boundary, odd
 *                 layouts, in place (y == x), on a non-blocking stream
 *   targets       cross-entropy targets: ignore_index inside [0, N), targets
 *                 out of range (NaN loss)
 *   invalid       invalid calls on real buffers launch nothing, touch nothing
 *   huge          the longest row (N = n_max, 2^30 now) through every
 *                 variant whose range goes past 262144
 *   launch        the launch helpers: the SM count, TMA tensor maps through
 *                 the driver and their cache (past its size, from threads)
 *   final         no CUDA error left behind
 * One line per variant or case goes to stdout (sizes, worst error). */
#define _POSIX_C_SOURCE 200809L
#include "kite_test.h"

#include <fnmatch.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>

#include "kite_internal.h"
#include "kite_launch.h"

extern char **environ;

/* softmax_bwd: x holds the forward's output y (rows of probabilities), dy the
   incoming gradient, and y receives dx; "in place" means dx == dy.
   cross_entropy_bwd: x the logits, lse the forward's (uploaded into lse_d),
   dloss given with aux; y receives dx, "in place" means dx == x. */
enum { OP_RMSNORM, OP_SOFTMAX, OP_CE, OP_SOFTMAX_BWD, OP_CE_BWD, OP_COUNT };
static const char *const op_names[OP_COUNT] = { "rmsnorm", "softmax", "cross_entropy", "softmax_bwd",
                                                "cross_entropy_bwd" };
static const kite_dtype row_dtypes[3] = { KITE_BF16, KITE_F16, KITE_F32 };

#define POISON 0xff   /* NaN in bf16, f16 and f32 */
#define GUARD 64      /* elements of poison after every buffer */
#define IGNORE (-100)

static int op_of(const char *name)
{
  for (int k = 0; k < OP_COUNT; k++)
    if (strcmp(name, op_names[k]) == 0) return k;
  return -1;
}

/* ---- tolerances ------------------------------------------------------------------- */

/* Row outputs (y): relative to the element, plus an absolute floor for what
   the dtype cannot hold (f16 subnormals). */
static double y_rtol(kite_dtype d) { return d == KITE_BF16 ? 1.6e-2 : d == KITE_F16 ? 2e-3 : 1e-5; }
static double y_atol(kite_dtype d) { return fmax(kt_out_atol(d), 1e-37); }
/* rstd is f32 computed from exactly representable inputs: accumulation error only. */
#define RSTD_RTOL 1e-5
/* loss and lse: f32 from exactly representable inputs; absolute, scaled by 1 + |ref|. */
static double ce_tol(kite_dtype d) { return d == KITE_F32 ? 1e-4 : 2e-4; }

/* ---- one problem: layout, data, launch, check ------------------------------------ */

typedef struct stats {
  double worst;     /* largest error / tolerance */
  double max_abs;   /* largest absolute error of any output */
  int64_t checked;  /* output values compared */
} stats;

typedef struct rowcase {
  int op;
  kite_dtype dt;
  const char *variant;      /* NULL: the op's entry point (dispatch) */
  cudaStream_t stream;
  int64_t M, N, ldx, ldy;   /* ldy: unused by cross_entropy */
  int64_t xoff, yoff, woff; /* elements from the allocation to the data */
  int64_t lddy, dyoff;      /* softmax_bwd's dy */
  int aux;                  /* rstd / lse given */
  int inplace;              /* y == x, ldy == ldx */
  float eps;
  int64_t ignore;
  int es;
  size_t xbytes, ybytes, wbytes, dybytes;
  unsigned char *xh, *wh, *dyh;   /* host copies as uploaded (poison outside the rows) */
  float *lseh, *dlossh;     /* cross_entropy_bwd's inputs as uploaded (index 0 before the data) */
  int64_t *th;              /* targets */
  unsigned char *xd, *yd, *wd, *dyd;
  int64_t *td;
  float *rstd_d, *loss_d, *lse_d, *dloss_d;   /* allocations; the outputs start one float in */
  unsigned char aux_poison; /* byte the f32 outputs are filled with first */
} rowcase;

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* Every case starts here: after a kernel fault the CUDA context is dead, and
   the cases after it say so instead of failing in some later call. */
static void context_ok(void)
{
  const cudaError_t e = cudaDeviceSynchronize();
  ck_assert_msg(e == cudaSuccess, "not run: the CUDA context is broken by an earlier case (%s: %s)",
                cudaGetErrorName(e), cudaGetErrorString(e));
}

/* Strides and offsets: 16-byte multiples for a variant that needs 16-byte
   alignment, else odd element counts (so x, y, w and the strides are only
   element-aligned). */
static void rc_layout(rowcase *c, kt_rng *r, int aligned16)
{
  if (aligned16) {
    const int64_t vec = 16 / c->es;
    c->ldx = round_up(c->N, vec) + vec * kt_range(r, 0, 2);
    c->ldy = round_up(c->N, vec) + vec * kt_range(r, 0, 2);
    c->xoff = vec * kt_range(r, 0, 2);
    c->yoff = vec * kt_range(r, 0, 2);
    c->woff = vec * kt_range(r, 0, 1);
  } else {
    c->ldx = c->N + 2 * kt_range(r, 0, 2) + 1;
    c->ldy = c->N + 2 * kt_range(r, 0, 2) + 1;
    c->xoff = 2 * kt_range(r, 0, 1) + 1;
    c->yoff = 2 * kt_range(r, 0, 1) + 1;
    c->woff = 2 * kt_range(r, 0, 1) + 1;
  }
  c->lddy = c->ldx + (aligned16 ? 16 / c->es : 2);
  c->dyoff = c->woff;
  if (c->inplace && c->op == OP_SOFTMAX_BWD) {
    c->ldy = c->lddy;
    c->yoff = c->dyoff;
  } else if (c->inplace) {
    c->ldy = c->ldx;
    c->yoff = c->xoff;
  }
}

static size_t span_bytes(int64_t off, int64_t M, int64_t ld, int64_t N, int es)
{
  return (size_t)((off + (M - 1) * ld + N + GUARD) * es);
}

/* Random inputs (rounded to the dtype; poison between rows), uploaded; outputs poisoned. */
static void rc_fill(rowcase *c, kt_rng *r)
{
  const int64_t M = c->M, N = c->N;
  c->es = kt_dtype_size(c->dt);
  c->xbytes = span_bytes(c->xoff, M, c->ldx, N, c->es);
  c->ybytes = c->inplace ? c->xbytes : span_bytes(c->yoff, M, c->ldy, N, c->es);
  c->wbytes = (size_t)((c->woff + N + GUARD) * c->es);
  c->xh = kt_halloc(c->xbytes);
  memset(c->xh, POISON, c->xbytes);
  c->th = kt_halloc((size_t)(M + 2) * sizeof(int64_t));
  double *num = c->op == OP_SOFTMAX_BWD ? kt_halloc((size_t)N * sizeof(double)) : NULL;
  for (int64_t i = 0; i < M; i++) {
    unsigned char *row = c->xh + (c->xoff + i * c->ldx) * c->es;
    if (c->op == OP_RMSNORM) {
      const double scale = exp(4.0 * kt_uniform(r) - 2.0);
      const int zero = M >= 3 && i == 1;   /* one all-zero row: rstd = 1/sqrt(eps) */
      for (int64_t j = 0; j < N; j++) kt_store(c->dt, row, j, zero ? 0.f : (float)(scale * kt_normal(r)));
    } else if (c->op == OP_SOFTMAX_BWD) {
      /* a softmax output: exp of scale-3 logits, normalised, rounded to the dtype
         (the numerators drawn once, then divided by their sum) */
      double sum = 0;
      for (int64_t j = 0; j < N; j++) {
        const double e = exp(fmin(3.0 * kt_normal(r), 30.0));
        sum += e;
        num[j] = e;
      }
      for (int64_t j = 0; j < N; j++) kt_store(c->dt, row, j, (float)(num[j] / sum));
    } else {
      /* scale 3 around a row offset, so that subtracting the max matters */
      const double shift = 120.0 * kt_uniform(r) - 60.0;
      for (int64_t j = 0; j < N; j++) kt_store(c->dt, row, j, (float)(shift + 3.0 * kt_normal(r)));
      if (M >= 2 && i == 0)   /* a constant row */
        for (int64_t j = 0; j < N; j++) kt_store(c->dt, row, j, (float)shift);
      if (M >= 3 && i == 1 && N > 1)   /* one element far above the rest */
        kt_store(c->dt, row, kt_range(r, 0, N - 1), (float)(shift + 40.0));
    }
    /* targets: about a fifth ignored; row 1 aims at its largest element, row 2 at its last */
    int64_t t = kt_range(r, 0, N - 1);
    if (kt_uniform(r) < 0.2) t = c->ignore;
    if (i == 2) t = N - 1;   /* the last element: in the scalar tail when N is odd */
    if (i == 1 && c->op == OP_CE) {
      float best = -INFINITY;
      for (int64_t j = 0; j < N; j++)
        if (kt_load(c->dt, row, j) > best) best = kt_load(c->dt, row, j), t = j;
    }
    c->th[i] = t;
  }
  c->xd = kt_dalloc(c->xbytes);
  KT_CUDA_CHECK(cudaMemcpy(c->xd, c->xh, c->xbytes, cudaMemcpyHostToDevice));
  if (c->op == OP_SOFTMAX_BWD) {   /* dy: unit normal, one row constant (dx = 0 there) */
    c->dybytes = span_bytes(c->dyoff, M, c->lddy, N, c->es);
    c->dyh = kt_halloc(c->dybytes);
    memset(c->dyh, POISON, c->dybytes);
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        kt_store(c->dt, c->dyh + (c->dyoff + i * c->lddy) * c->es, j, M >= 2 && i == 0 ? 0.75f : (float)kt_normal(r));
    c->dyd = kt_dalloc(c->dybytes);
    KT_CUDA_CHECK(cudaMemcpy(c->dyd, c->dyh, c->dybytes, cudaMemcpyHostToDevice));
    if (c->inplace) c->ybytes = c->dybytes;
  }
  if (c->op == OP_RMSNORM) {
    c->wh = kt_halloc(c->wbytes);
    memset(c->wh, POISON, c->wbytes);
    for (int64_t j = 0; j < N; j++) kt_store(c->dt, c->wh, c->woff + j, (float)(1.0 + 0.5 * kt_normal(r)));
    c->wd = kt_dalloc(c->wbytes);
    KT_CUDA_CHECK(cudaMemcpy(c->wd, c->wh, c->wbytes, cudaMemcpyHostToDevice));
  }
  if (c->op != OP_CE) {
    c->yd = c->inplace ? (c->op == OP_SOFTMAX_BWD ? c->dyd : c->xd) : kt_dalloc(c->ybytes);
    if (!c->inplace) KT_CUDA_CHECK(cudaMemset(c->yd, POISON, c->ybytes));
  }
  if (c->op == OP_CE || c->op == OP_CE_BWD) {
    c->td = kt_dalloc((size_t)(M + 2) * sizeof(int64_t));
    KT_CUDA_CHECK(cudaMemcpy(c->td + 1, c->th, (size_t)M * sizeof(int64_t), cudaMemcpyHostToDevice));
  }
  const size_t fbytes = (size_t)(M + GUARD) * sizeof(float);
  c->rstd_d = kt_dalloc(fbytes);
  c->loss_d = kt_dalloc(fbytes);
  c->lse_d = kt_dalloc(fbytes);
  c->dloss_d = kt_dalloc(fbytes);
  KT_CUDA_CHECK(cudaMemset(c->rstd_d, c->aux_poison, fbytes));
  KT_CUDA_CHECK(cudaMemset(c->loss_d, c->aux_poison, fbytes));
  KT_CUDA_CHECK(cudaMemset(c->lse_d, c->aux_poison, fbytes));
  KT_CUDA_CHECK(cudaMemset(c->dloss_d, c->aux_poison, fbytes));
  if (c->op == OP_CE_BWD) {   /* the forward's lse (f32, from the rows as stored) and a loss gradient */
    c->lseh = kt_halloc(fbytes);
    c->dlossh = kt_halloc(fbytes);
    KT_CUDA_CHECK(cudaMemcpy(c->lseh, c->lse_d, fbytes, cudaMemcpyDeviceToHost));
    KT_CUDA_CHECK(cudaMemcpy(c->dlossh, c->dloss_d, fbytes, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < M; i++) {
      const unsigned char *row = c->xh + (c->xoff + i * c->ldx) * c->es;
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < N; j++) m = fmax(m, (double)kt_load(c->dt, row, j));
      for (int64_t j = 0; j < N; j++) sum += exp((double)kt_load(c->dt, row, j) - m);
      c->lseh[1 + i] = (float)(m + log(sum));
      c->dlossh[1 + i] = (float)(0.5 + kt_uniform(r)) / (float)M;
    }
    KT_CUDA_CHECK(cudaMemcpy(c->lse_d, c->lseh, fbytes, cudaMemcpyHostToDevice));
    KT_CUDA_CHECK(cudaMemcpy(c->dloss_d, c->dlossh, fbytes, cudaMemcpyHostToDevice));
  }
}

static kite_row_args rc_args(const rowcase *c)
{
  kite_row_args a;
  memset(&a, 0, sizeof a);
  a.M = c->M;
  a.N = c->N;
  a.x = c->xd + c->xoff * c->es;
  a.ldx = c->ldx;
  if (c->op != OP_CE) {
    a.y = c->yd + c->yoff * c->es;
    a.ldy = c->ldy;
  }
  if (c->op == OP_RMSNORM) {
    a.w = c->wd + c->woff * c->es;
    a.eps = c->eps;
    a.rstd = c->aux ? c->rstd_d + 1 : NULL;
  }
  if (c->op == OP_CE) {
    a.target = c->td + 1;
    a.ignore_index = c->ignore;
    a.loss = c->loss_d + 1;
    a.lse = c->aux ? c->lse_d + 1 : NULL;
  }
  if (c->op == OP_SOFTMAX_BWD) {
    a.dy = c->dyd + c->dyoff * c->es;
    a.lddy = c->lddy;
  }
  if (c->op == OP_CE_BWD) {
    a.target = c->td + 1;
    a.ignore_index = c->ignore;
    a.lse = c->lse_d + 1;
    a.dloss = c->aux ? c->dloss_d + 1 : NULL;
  }
  return a;
}

static kite_status rc_call(const rowcase *c)
{
  const kite_row_args a = rc_args(c);
  if (c->variant) return kite_run_variant(c->variant, &a, c->stream);
  switch (c->op) {
  case OP_RMSNORM:
    return kite_rmsnorm_fwd(c->dt, a.M, a.N, a.x, a.ldx, a.w, a.eps, a.y, a.ldy, a.rstd, c->stream);
  case OP_SOFTMAX:
    return kite_softmax_fwd(c->dt, a.M, a.N, a.x, a.ldx, a.y, a.ldy, c->stream);
  case OP_SOFTMAX_BWD:
    return kite_softmax_bwd(c->dt, a.M, a.N, a.x, a.ldx, a.dy, a.lddy, a.y, a.ldy, c->stream);
  case OP_CE_BWD:
    return kite_cross_entropy_bwd(c->dt, a.M, a.N, a.x, a.ldx, a.target, a.ignore_index, a.lse, a.dloss, a.y,
                                  a.ldy, c->stream);
  default:
    return kite_cross_entropy_fwd(c->dt, a.M, a.N, a.x, a.ldx, a.target, a.ignore_index, a.loss, a.lse,
                                  c->stream);
  }
}

static void rc_run(const rowcase *c)
{
  /* the data was written on the legacy default stream, which a non-blocking
     stream does not wait for */
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  const uint64_t before = kite__launch_count();
  const kite_status s = rc_call(c);
  ck_assert_msg(s == KITE_OK, "%s %s M=%lld N=%lld via %s: %s (%s)", op_names[c->op], kt_dtype_name(c->dt),
                (long long)c->M, (long long)c->N, c->variant ? c->variant : "entry point", kite_status_str(s),
                kite_last_error());
  ck_assert_msg(kite__launch_count() > before, "KITE_OK but no launch counted");
  KT_CUDA_CHECK(cudaStreamSynchronize(c->stream));
  KT_CUDA_CHECK(cudaGetLastError());
}

/* What came back from the device. */
typedef struct outputs {
  unsigned char *x, *y;
  float *rstd, *loss, *lse;   /* whole allocations (index 0 is before the data) */
} outputs;

static void rc_download(const rowcase *c, outputs *o)
{
  const size_t fbytes = (size_t)(c->M + GUARD) * sizeof(float);
  o->x = kt_halloc(c->xbytes);
  KT_CUDA_CHECK(cudaMemcpy(o->x, c->xd, c->xbytes, cudaMemcpyDeviceToHost));
  o->y = NULL;
  if (c->op != OP_CE) {
    o->y = kt_halloc(c->ybytes);
    KT_CUDA_CHECK(cudaMemcpy(o->y, c->yd, c->ybytes, cudaMemcpyDeviceToHost));
  }
  o->rstd = kt_halloc(fbytes);
  o->loss = kt_halloc(fbytes);
  o->lse = kt_halloc(fbytes);
  KT_CUDA_CHECK(cudaMemcpy(o->rstd, c->rstd_d, fbytes, cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(o->loss, c->loss_d, fbytes, cudaMemcpyDeviceToHost));
  KT_CUDA_CHECK(cudaMemcpy(o->lse, c->lse_d, fbytes, cudaMemcpyDeviceToHost));
}

static const char *rc_name(const rowcase *c, char *buf, size_t len)
{
  snprintf(buf, len, "%s %s M=%lld N=%lld ldx=%lld ldy=%lld off=%lld/%lld%s%s via %s", op_names[c->op],
           kt_dtype_name(c->dt), (long long)c->M, (long long)c->N, (long long)c->ldx, (long long)c->ldy,
           (long long)c->xoff, (long long)c->yoff, c->inplace ? " in place" : "", c->aux ? " +aux" : "",
           c->variant ? c->variant : "entry point");
  return buf;
}

/* bytes [from, to) of buf must all still be poison */
static void expect_poison(const unsigned char *buf, size_t from, size_t to, unsigned char poison,
                          const char *what, const char *where)
{
  for (size_t b = from; b < to; b++)
    KT_EXPECT(buf[b] == poison, "%s: %s byte %zu was written (0x%02x)", where, what, b, buf[b]);
}

static void note(stats *st, double err, double tol)
{
  if (err > st->max_abs) st->max_abs = err;
  if (err / tol > st->worst) st->worst = err / tol;
  st->checked++;
}

static void check_f32(float got, double want, double tol, stats *st, const char *what, int64_t row,
                      const char *where)
{
  ck_assert_msg(!isnan(got) || isnan(want), "%s: %s[%lld] not written (NaN), want %.9g", where, what,
                (long long)row, want);
  const double err = fabs((double)got - want);
  ck_assert_msg(err <= tol, "%s: %s[%lld] = %.9g, want %.9g (error %.3g > %.3g)", where, what, (long long)row,
                (double)got, want, err, tol);
  note(st, err, tol);
}

/* Compares everything the kernel wrote with the float64 reference, and
   checks that nothing else changed. */
static void rc_check(const rowcase *c, const outputs *o, stats *st)
{
  char where[320];
  rc_name(c, where, sizeof where);
  const int64_t M = c->M, N = c->N;
  const kite_dtype dt = c->dt;
  double *ref = kt_halloc((size_t)N * sizeof(double));
  double *extra = kt_halloc((size_t)N * sizeof(double));   /* per element: f32 arithmetic's share */
  for (int64_t j = 0; j < N; j++) extra[j] = 0;
  if (!c->inplace || c->op == OP_SOFTMAX_BWD)
    ck_assert_msg(memcmp(o->x, c->xh, c->xbytes) == 0, "%s: x was modified", where);
  double floor = 0.0;   /* outputs far below the row's scale are judged against it */
  for (int64_t i = 0; i < M; i++) {
    const unsigned char *xr = c->xh + (c->xoff + i * c->ldx) * c->es;
    if (c->op == OP_SOFTMAX_BWD) {
      /* dx_j = y_j (dy_j - dot): in f32 the dot is off by up to ~1e-5 of sum |y dy| and
         dy_j - dot by a rounding of its terms; both scale with y_j (dy_j - dot may cancel) */
      const unsigned char *gr = c->dyh + (c->dyoff + i * c->lddy) * c->es;
      double dot = 0, mag = 0;
      for (int64_t j = 0; j < N; j++) {
        const double p = (double)kt_load(dt, xr, j) * kt_load(dt, gr, j);
        dot += p;
        mag += fabs(p);
      }
      for (int64_t j = 0; j < N; j++) {
        const double yj = kt_load(dt, xr, j), gj = kt_load(dt, gr, j);
        ref[j] = yj * (gj - dot);
        extra[j] = fabs(yj) * (1e-5 * mag + 1e-6 * (fabs(gj) + fabs(dot)));
      }
    } else if (c->op == OP_CE_BWD) {
      /* dx_j = (exp(x_j - lse) - [j == t]) g from the uploaded f32 lse; exp2.approx and the
         exponent's f32 rounding (|x| up to ~100) give about 1e-5 of each probability */
      const double lse = c->lseh[1 + i], g = c->aux ? c->dlossh[1 + i] : 1.0;
      const int64_t t = c->th[i];
      for (int64_t j = 0; j < N; j++) {
        const double p = exp((double)kt_load(dt, xr, j) - lse);
        ref[j] = t == c->ignore ? 0.0 : (p - (j == t ? 1.0 : 0.0)) * g;
        extra[j] = t == c->ignore ? 0.0 : fabs(g) * (2e-5 * p + 1e-7);
      }
    } else if (c->op == OP_RMSNORM) {
      double ss = 0;
      for (int64_t j = 0; j < N; j++) {
        const double v = kt_load(dt, xr, j);
        ss += v * v;
      }
      const double rs = 1.0 / sqrt(ss / (double)N + (double)c->eps);
      for (int64_t j = 0; j < N; j++) ref[j] = (double)kt_load(dt, xr, j) * rs * kt_load(dt, c->wh, c->woff + j);
      if (c->aux) check_f32(o->rstd[1 + i], rs, RSTD_RTOL * rs, st, "rstd", i, where);
    } else {
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < N; j++) m = fmax(m, (double)kt_load(dt, xr, j));
      for (int64_t j = 0; j < N; j++) s += exp((double)kt_load(dt, xr, j) - m);
      if (c->op == OP_SOFTMAX) {
        for (int64_t j = 0; j < N; j++) ref[j] = exp((double)kt_load(dt, xr, j) - m) / s;
      } else {
        const double lse = m + log(s), tol = ce_tol(dt);
        const int64_t t = c->th[i];
        if (t == c->ignore) {
          ck_assert_msg(o->loss[1 + i] == 0.f, "%s: ignored row %lld has loss %.9g, want 0", where, (long long)i,
                        (double)o->loss[1 + i]);
          st->checked++;
        } else if (t < 0 || t >= N) {
          ck_assert_msg(isnan(o->loss[1 + i]), "%s: row %lld, target %lld out of range: loss %.9g, want NaN",
                        where, (long long)i, (long long)t, (double)o->loss[1 + i]);
          st->checked++;
        } else {
          const double want = lse - (double)kt_load(dt, xr, t);
          check_f32(o->loss[1 + i], want, tol * (1 + fabs(want)), st, "loss", i, where);
        }
        if (c->aux) check_f32(o->lse[1 + i], lse, tol * (1 + fabs(lse)), st, "lse", i, where);
      }
    }
    if (c->op == OP_CE) continue;
    double rowmax = 0;
    for (int64_t j = 0; j < N; j++) rowmax = fmax(rowmax, fabs(ref[j]));
    /* softmax outputs far below the row's largest are judged against it */
    if (c->op == OP_SOFTMAX) floor = 1e-4 * rowmax;
    const unsigned char *yr = o->y + (c->yoff + i * c->ldy) * c->es;
    for (int64_t j = 0; j < N; j++) {
      const double got = kt_load(dt, yr, j), want = ref[j];
      const double tol = y_rtol(dt) * (fabs(want) + floor) + y_atol(dt) + extra[j];
      KT_EXPECT(!isnan(got) && fabs(got - want) <= tol, "%s: y[%lld][%lld] = %.9g, want %.9g (tolerance %.3g)%s",
                where, (long long)i, (long long)j, got, want, tol, isnan(got) ? " - not written" : "");
      note(st, fabs(got - want), tol);
    }
  }
  /* y's padding, its bytes before the first row and after the last: untouched */
  if (c->op != OP_CE) {
    size_t at = 0;
    for (int64_t i = 0; i < M; i++) {
      const size_t start = (size_t)((c->yoff + i * c->ldy) * c->es);
      expect_poison(o->y, at, start, POISON, "y padding", where);
      at = start + (size_t)(N * c->es);
    }
    expect_poison(o->y, at, c->ybytes, POISON, "y after the last row", where);
  }
  /* the f32 outputs: only [1, M] written, and only those the op has */
  const size_t fb = (size_t)(M + GUARD) * sizeof(float);
  const unsigned char *rstd = (const unsigned char *)o->rstd, *loss = (const unsigned char *)o->loss,
                      *lse = (const unsigned char *)o->lse;
  const int wrote_rstd = c->op == OP_RMSNORM && c->aux, wrote_lse = c->op == OP_CE && c->aux;
  const int lse_in = c->op == OP_CE_BWD;   /* lse and dloss are its inputs: unchanged */
  expect_poison(rstd, 0, wrote_rstd ? 4 : fb, c->aux_poison, "rstd", where);
  if (wrote_rstd) expect_poison(rstd, (size_t)(M + 1) * 4, fb, c->aux_poison, "rstd after M", where);
  const int wrote_loss = c->op == OP_CE;
  expect_poison(loss, 0, wrote_loss ? 4 : fb, c->aux_poison, "loss", where);
  if (wrote_loss) expect_poison(loss, (size_t)(M + 1) * 4, fb, c->aux_poison, "loss after M", where);
  if (lse_in) {
    ck_assert_msg(memcmp(o->lse, c->lseh, fb) == 0, "%s: lse (an input) was modified", where);
    float *dl = kt_halloc(fb);
    KT_CUDA_CHECK(cudaMemcpy(dl, c->dloss_d, fb, cudaMemcpyDeviceToHost));
    ck_assert_msg(memcmp(dl, c->dlossh, fb) == 0, "%s: dloss (an input) was modified", where);
  } else {
    expect_poison(lse, 0, wrote_lse ? 4 : fb, c->aux_poison, "lse", where);
    if (wrote_lse) expect_poison(lse, (size_t)(M + 1) * 4, fb, c->aux_poison, "lse after M", where);
  }
  /* dy is read only (unless dx is dy) */
  if (c->op == OP_SOFTMAX_BWD && !c->inplace) {
    unsigned char *g = kt_halloc(c->dybytes);
    KT_CUDA_CHECK(cudaMemcpy(g, c->dyd, c->dybytes, cudaMemcpyDeviceToHost));
    ck_assert_msg(memcmp(g, c->dyh, c->dybytes) == 0, "%s: dy was modified", where);
  }
  /* w is read only */
  if (c->op == OP_RMSNORM) {
    unsigned char *w = kt_halloc(c->wbytes);
    KT_CUDA_CHECK(cudaMemcpy(w, c->wd, c->wbytes, cudaMemcpyDeviceToHost));
    ck_assert_msg(memcmp(w, c->wh, c->wbytes) == 0, "%s: w was modified", where);
  }
}

/* The bytes a run wrote (y rows, rstd, loss, lse), for identity checks. */
static int same_outputs(const rowcase *c, const outputs *a, int64_t ra, const outputs *b, int64_t rb, int64_t rows)
{
  const size_t rowbytes = (size_t)(c->N * c->es);
  for (int64_t i = 0; i < rows; i++) {
    if (c->op != OP_CE &&
        memcmp(a->y + (c->yoff + (ra + i) * c->ldy) * c->es, b->y + (c->yoff + (rb + i) * c->ldy) * c->es,
               rowbytes) != 0)
      return 0;
    if (memcmp(&a->rstd[1 + ra + i], &b->rstd[1 + rb + i], 4) || memcmp(&a->loss[1 + ra + i], &b->loss[1 + rb + i], 4) ||
        memcmp(&a->lse[1 + ra + i], &b->lse[1 + rb + i], 4))
      return 0;
  }
  return 1;
}

/* A new case for op/dtype/variant with the usual defaults. */
static rowcase rc_new(int op, kite_dtype dt, const char *variant, int64_t M, int64_t N)
{
  rowcase c;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.dt = dt;
  c.variant = variant;
  c.M = M;
  c.N = N;
  c.es = kt_dtype_size(dt);
  c.eps = 1e-5f;
  c.ignore = IGNORE;
  c.aux_poison = POISON;
  return c;
}

/* ---- every variant --------------------------------------------------------------- */

static int64_t rows_for(int64_t N) { return N <= 4097 ? 37 : N <= 65537 ? 5 : 3; }

START_TEST(variant_matches_reference)
{
  context_ok();
  kite_variant_info info;
  KT_KITE_OK(kite_variant_get((int32_t)_i, &info));
  const int op = op_of(info.op);
  ck_assert_msg(op >= 0, "%s: test_gpu has no reference for op \"%s\"", info.name, info.op);
  const int es = kt_dtype_size(info.dtype);
  const int aligned16 = info.align > es;
  kt_rng r = kt_rng_for(info.name, 0);

  static const int64_t base_sizes[] = { 1, 7, 33, 1000, 4097, 65537, 262144 };
  int64_t sizes[16];
  int ns = 0;
  for (size_t k = 0; k < sizeof base_sizes / sizeof base_sizes[0]; k++)
    if (base_sizes[k] >= info.n_min && base_sizes[k] <= info.n_max) sizes[ns++] = base_sizes[k];
  if (ns == 0) sizes[ns++] = info.n_min;   /* a range above all of them */
  if (info.n_max <= 262144) {
    if (info.n_max - 1 >= info.n_min && info.n_max - 1 > sizes[ns - 1]) sizes[ns++] = info.n_max - 1;
    if (info.n_max > sizes[ns - 1]) sizes[ns++] = info.n_max;
  }
  ck_assert_int_gt(ns, 0);

  stats st = { 0, 0, 0 };
  char line[512];
  int at = snprintf(line, sizeof line, "variant %-44s M x N:", info.name);
  int repeated = 0, batched = 0;
  for (int k = 0; k < ns; k++) {
    rowcase c = rc_new(op, info.dtype, info.name, rows_for(sizes[k]), sizes[k]);
    c.aux = k % 2;
    c.inplace = op != OP_CE && k % 3 == 2;
    rc_layout(&c, &r, aligned16);
    rc_fill(&c, &r);
    rc_run(&c);
    outputs o;
    rc_download(&c, &o);
    rc_check(&c, &o, &st);
    if (at < (int)sizeof line) at += snprintf(line + at, sizeof line - (size_t)at, " %lldx%lld", (long long)c.M, (long long)c.N);

    /* the same inputs again: identical bytes */
    if (!c.inplace && !repeated) {
      if (c.op != OP_CE) KT_CUDA_CHECK(cudaMemset(c.yd, POISON, c.ybytes));
      rc_run(&c);
      outputs o2;
      rc_download(&c, &o2);
      ck_assert_msg(same_outputs(&c, &o, 0, &o2, 0, c.M), "%s M=%lld N=%lld: a second run gave other bytes",
                    info.name, (long long)c.M, (long long)c.N);
      repeated = 1;
    }
    /* the last row on its own: the same bytes as in the batch */
    if (!c.inplace && !batched && c.M > 1) {
      rowcase one = c;
      one.M = 1;
      one.xd = kt_dalloc(c.xbytes);   /* a copy of x with the last row first */
      KT_CUDA_CHECK(cudaMemset(one.xd, POISON, c.xbytes));
      KT_CUDA_CHECK(cudaMemcpy(one.xd + c.xoff * c.es, c.xd + (c.xoff + (c.M - 1) * c.ldx) * c.es,
                               (size_t)(c.N * c.es), cudaMemcpyDeviceToDevice));
      if (c.op == OP_CE || c.op == OP_CE_BWD) one.td = c.td + (c.M - 1);
      if (c.op == OP_CE_BWD) {   /* the last row's lse and dloss first */
        one.lse_d = c.lse_d + (c.M - 1);
        one.dloss_d = c.dloss_d + (c.M - 1);
      }
      if (c.op == OP_SOFTMAX_BWD) {   /* and dy's last row first */
        one.dyd = kt_dalloc(c.dybytes);
        KT_CUDA_CHECK(cudaMemset(one.dyd, POISON, c.dybytes));
        KT_CUDA_CHECK(cudaMemcpy(one.dyd + c.dyoff * c.es, c.dyd + (c.dyoff + (c.M - 1) * c.lddy) * c.es,
                                 (size_t)(c.N * c.es), cudaMemcpyDeviceToDevice));
      }
      rc_run(&one);
      outputs o1;
      rc_download(&one, &o1);
      ck_assert_msg(same_outputs(&c, &o, c.M - 1, &o1, 0, 1),
                    "%s N=%lld: row %lld alone differs from the same row in a batch of %lld", info.name,
                    (long long)c.N, (long long)(c.M - 1), (long long)c.M);
      batched = 1;
    }
    kt_free_all();
  }
  /* many rows: a persistent variant's CTAs go round their stages (and barrier
     phases) many times, over short rows (tails past 16-byte accesses too),
     and over rows of several chunks, several rows per CTA */
  static const int64_t many_n[] = { 100, 40001 };
  for (int k = 0; k < 2; k++) {
    int64_t n = info.n_max < many_n[k] ? info.n_max : info.n_min > many_n[k] ? info.n_min : many_n[k];
    if (k == 1 && n != many_n[k]) break;   /* no long rows for this variant */
    rowcase c = rc_new(op, info.dtype, info.name, k == 0 ? ((int64_t)1 << 22) / n : 600, n);
    c.aux = 1;
    rc_layout(&c, &r, aligned16);
    rc_fill(&c, &r);
    rc_run(&c);
    outputs o;
    rc_download(&c, &o);
    rc_check(&c, &o, &st);
    if (at < (int)sizeof line) at += snprintf(line + at, sizeof line - (size_t)at, " %lldx%lld", (long long)c.M, (long long)c.N);
    kt_free_all();
  }
  printf("%s; worst %.3f of tolerance, max abs err %.3g, %lld values\n", line, st.worst, st.max_abs,
         (long long)st.checked);
  fflush(stdout);
}
END_TEST

/* ---- the entry points ------------------------------------------------------------ */

/* Every size at which dispatch changes variant (for 16-byte-aligned data),
   and a few others, through the entry point, aligned and not; some on a
   non-blocking stream. */
START_TEST(entry_point_at_dispatch_boundaries)
{
  context_ok();
  const int op = _i / 3;
  const kite_dtype dt = row_dtypes[_i % 3];
  kt_rng r = kt_rng_for("entry", _i);
  int64_t sizes[128];
  int ns = 0;
  sizes[ns++] = 1;
  sizes[ns++] = 3;
  sizes[ns++] = 40000;
  for (int32_t i = 0; i < kite_variant_count() && ns + 2 <= 128; i++) {
    kite_variant_info v;
    KT_KITE_OK(kite_variant_get(i, &v));
    if (strcmp(v.op, op_names[op]) != 0 || v.dtype != dt || v.n_max > 262144) continue;
    sizes[ns++] = v.n_max;
    sizes[ns++] = v.n_max + 1;
  }
  cudaStream_t stream;
  KT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stats st = { 0, 0, 0 };
  for (int k = 0; k < ns; k++)
    for (int aligned = 0; aligned < 2; aligned++) {
      rowcase c = rc_new(op, dt, NULL, 3, sizes[k]);
      c.aux = (k + aligned) % 2;
      c.stream = (k % 2) ? stream : 0;
      c.eps = 1e-6f;
      rc_layout(&c, &r, aligned);
      rc_fill(&c, &r);
      rc_run(&c);
      outputs o;
      rc_download(&c, &o);
      rc_check(&c, &o, &st);
      kt_free_all();
    }
  KT_CUDA_CHECK(cudaStreamDestroy(stream));
  printf("entry %s %s: %d sizes (1 .. %lld) x aligned/odd; worst %.3f of tolerance, max abs err %.3g\n",
         op_names[op], kt_dtype_name(dt), ns, (long long)sizes[ns - 1], st.worst, st.max_abs);
  fflush(stdout);
}
END_TEST

/* Tuned rule _i of a row op in the device's measured set: the entry point at
   the rule's N (and one either side) picks the rule's variant there and gets
   the reference's answer. */
START_TEST(tuned_rule_is_correct)
{
  context_ok();
  const struct kite_rule *rule = &kite__table(NULL)->rules[_i];
  const int op = op_of(rule->op);
  if (op < 0) return;   /* a gemm rule: test_gemm's */
  kt_rng r = kt_rng_for("tuned", _i);
  char buf[1024];
  KT_KITE_OK(kite_explain(rule->op, rule->dtype, 3, rule->n, 0, buf, sizeof buf));
  ck_assert_msg(strstr(buf, kite_variants[rule->variant].name) && strstr(buf, "tuned rule"),
                "rule %d (%s N=%lld) wants %s; explain: %s", _i, rule->op, (long long)rule->n,
                kite_variants[rule->variant].name, buf);
  stats st = { 0, 0, 0 };
  for (int64_t n = rule->n - 1; n <= rule->n + 1; n++) {
    if (n < 1) continue;
    rowcase c = rc_new(op, rule->dtype, NULL, 3, n);
    c.eps = 1e-6f;
    rc_layout(&c, &r, 1);
    rc_fill(&c, &r);
    rc_run(&c);
    outputs o;
    rc_download(&c, &o);
    rc_check(&c, &o, &st);
    kt_free_all();
  }
}
END_TEST

/* y == x with ldy == ldx through the entry points. */
START_TEST(entry_point_in_place)
{
  context_ok();
  const int op = _i / 3 == 0 ? OP_RMSNORM : OP_SOFTMAX;
  const kite_dtype dt = row_dtypes[_i % 3];
  kt_rng r = kt_rng_for("inplace", _i);
  static const int64_t sizes[] = { 1, 1000, 4096, 40000, 100001 };
  stats st = { 0, 0, 0 };
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    for (int aligned = 0; aligned < 2; aligned++) {
      rowcase c = rc_new(op, dt, NULL, sizes[k] > 5000 ? 4 : 19, sizes[k]);
      c.inplace = 1;
      c.aux = aligned;
      rc_layout(&c, &r, aligned);
      rc_fill(&c, &r);
      rc_run(&c);
      outputs o;
      rc_download(&c, &o);
      rc_check(&c, &o, &st);
      kt_free_all();
    }
  printf("in place %s %s: N 1 .. 100001, aligned/odd; worst %.3f of tolerance\n", op_names[op], kt_dtype_name(dt),
         st.worst);
  fflush(stdout);
}
END_TEST

/* ---- cross-entropy targets ------------------------------------------------------------ */

/* ignore_index inside [0, N), and targets outside it (NaN loss), for every
   cross-entropy variant; loss and lse are poisoned with a finite pattern so
   that a NaN must have been written. */
START_TEST(cross_entropy_targets)
{
  context_ok();
  int seen = 0;
  for (int32_t i = 0; i < kite_variant_count(); i++) {
    kite_variant_info info;
    KT_KITE_OK(kite_variant_get(i, &info));
    if (op_of(info.op) != OP_CE) continue;
    kt_rng r = kt_rng_for("targets", i);
    const int64_t N = info.n_max < 300 ? info.n_max : info.n_min > 300 ? info.n_min : 300;   /* in its range */
    rowcase c = rc_new(OP_CE, info.dtype, info.name, 40, N);
    c.ignore = N > 3 ? 3 : 0;
    c.aux = 1;
    c.aux_poison = 0x55;   /* 0x55555555: a finite float */
    rc_layout(&c, &r, info.align > kt_dtype_size(info.dtype));
    rc_fill(&c, &r);
    static const int64_t bad[] = { -1, -100, INT64_MIN, INT64_MAX, 0, 0 };
    for (int64_t row = 0; row < c.M; row++) {
      if (row % 4 == 1) c.th[row] = c.ignore;
      if (row % 4 == 2) c.th[row] = bad[(row / 4) % 4];
      if (row % 4 == 3 && row < 8) c.th[row] = N;   /* one past the end */
    }
    KT_CUDA_CHECK(cudaMemcpy(c.td + 1, c.th, (size_t)c.M * sizeof(int64_t), cudaMemcpyHostToDevice));
    rc_run(&c);
    outputs o;
    rc_download(&c, &o);
    stats st = { 0, 0, 0 };
    rc_check(&c, &o, &st);
    kt_free_all();
    seen++;
  }
  ck_assert_int_gt(seen, 0);
  printf("cross-entropy targets: %d variants, ignore_index in range, out-of-range targets give NaN\n", seen);
  fflush(stdout);
}
END_TEST

/* ---- invalid calls on real buffers -------------------------------------------------- */

START_TEST(invalid_calls_touch_nothing)
{
  context_ok();
  kt_rng r = kt_rng_for("invalid", 0);
  int calls = 0;
  for (int op = 0; op < OP_COUNT; op++)
    for (int d = 0; d < 3; d++) {
      const kite_dtype dt = row_dtypes[d];
      rowcase c = rc_new(op, dt, NULL, 5, 700);
      c.aux = 1;
      rc_layout(&c, &r, 1);
      rc_fill(&c, &r);
      const kite_row_args good = rc_args(&c);
      const int es = c.es;
      /* a reg variant that cannot take N = 700 + 100000, and a 16-byte one */
      const char *small = NULL, *v16 = NULL;
      for (int32_t i = 0; i < kite_variant_count(); i++) {
        kite_variant_info v;
        KT_KITE_OK(kite_variant_get(i, &v));
        if (strcmp(v.op, op_names[op]) != 0 || v.dtype != dt) continue;
        if (v.n_max < 100700 && v.n_min <= 700 && 700 <= v.n_max) small = v.name;
        if (v.align > es && v.n_min <= 700 && 700 <= v.n_max) v16 = v.name;
      }
      for (int k = 0; k < 15; k++) {
        kite_row_args a = good;
        const char *variant = NULL;
        kite_dtype cdt = dt;
        switch (k) {
        case 0: a.x = NULL; break;
        case 1: a.ldx = a.N - 1; break;
        case 2: a.x = (const char *)a.x + 1; break;
        case 3: if (op == OP_CE) a.target = (const int64_t *)((const char *)a.target + 4); else a.ldy = a.N - 1; break;
        case 4: if (op == OP_CE) a.loss = NULL; else a.y = (char *)a.y + 1; break;
        case 5: if (op == OP_RMSNORM) a.eps = NAN; else if (op == OP_CE) a.lse = (float *)((char *)a.lse + 2); else a.M = -1; break;
        case 6: if (op != OP_CE) { a.y = (char *)a.x + es; a.ldy = a.ldx; } else a.N = -1; break;   /* overlap */
        case 7: cdt = (kite_dtype)99; break;
        case 8: cdt = KITE_E4M3; break;
        case 9: a.N = (int64_t)INT32_MAX + 1; a.ldx = a.ldy = a.N; break;
        case 10: if (!small) continue; variant = small; a.N = 100700; a.ldx = a.ldy = round_up(a.N, 16); a.M = 1; break;
        case 11: if (!v16) continue; variant = v16; a.ldx = good.ldx + 1; break;
        case 12: if (!v16) continue; variant = v16; a.x = (const char *)a.x + es; break;
        case 13: variant = "no_such_variant"; break;
        case 14: a.M = 1; a.N = ((int64_t)1 << 30) + 1; a.ldx = a.ldy = round_up(a.N, 16); break;  /* no variant */
        }
        const uint64_t before = kite__launch_count();
        kite_status s;
        if (variant) {
          s = kite_run_variant(variant, &a, 0);
        } else {
          switch (op) {
          case OP_RMSNORM: s = kite_rmsnorm_fwd(cdt, a.M, a.N, a.x, a.ldx, a.w, a.eps, a.y, a.ldy, a.rstd, 0); break;
          case OP_SOFTMAX: s = kite_softmax_fwd(cdt, a.M, a.N, a.x, a.ldx, a.y, a.ldy, 0); break;
          case OP_SOFTMAX_BWD: s = kite_softmax_bwd(cdt, a.M, a.N, a.x, a.ldx, a.dy, a.lddy, a.y, a.ldy, 0); break;
          case OP_CE_BWD:
            s = kite_cross_entropy_bwd(cdt, a.M, a.N, a.x, a.ldx, a.target, a.ignore_index, a.lse, a.dloss, a.y,
                                       a.ldy, 0);
            break;
          default: s = kite_cross_entropy_fwd(cdt, a.M, a.N, a.x, a.ldx, a.target, a.ignore_index, a.loss, a.lse, 0);
          }
        }
        ck_assert_msg(s != KITE_OK, "%s %s invalid call %d returned KITE_OK", op_names[op], kt_dtype_name(dt), k);
        ck_assert_msg(kite__launch_count() == before, "%s %s invalid call %d (%s) launched", op_names[op],
                      kt_dtype_name(dt), k, kite_status_str(s));
        calls++;
      }
      KT_CUDA_CHECK(cudaDeviceSynchronize());
      outputs o;
      rc_download(&c, &o);
      char where[96];
      snprintf(where, sizeof where, "%s %s after invalid calls", op_names[op], kt_dtype_name(dt));
      ck_assert_msg(memcmp(o.x, c.xh, c.xbytes) == 0, "%s: x changed", where);
      if (o.y) expect_poison(o.y, 0, c.ybytes, POISON, "y", where);
      if (c.dyd) {
        unsigned char *g = kt_halloc(c.dybytes);
        KT_CUDA_CHECK(cudaMemcpy(g, c.dyd, c.dybytes, cudaMemcpyDeviceToHost));
        ck_assert_msg(memcmp(g, c.dyh, c.dybytes) == 0, "%s: dy changed", where);
      }
      const size_t fb = (size_t)(c.M + GUARD) * sizeof(float);
      expect_poison((unsigned char *)o.rstd, 0, fb, POISON, "rstd", where);
      expect_poison((unsigned char *)o.loss, 0, fb, POISON, "loss", where);
      if (op == OP_CE_BWD) ck_assert_msg(memcmp(o.lse, c.lseh, fb) == 0, "%s: lse changed", where);
      else expect_poison((unsigned char *)o.lse, 0, fb, POISON, "lse", where);
      kt_free_all();
    }
  KT_CUDA_CHECK(cudaGetLastError());
  printf("invalid calls: %d refused, nothing launched or written\n", calls);
  fflush(stdout);
}
END_TEST


/* ---- the longest rows ------------------------------------------------------------------ */

/* Fills bytes of device memory with a repeated pattern (whose size divides 4096). */
static void dev_fill(unsigned char *d, size_t bytes, const void *pat, size_t patbytes)
{
  const size_t first = bytes < ((size_t)1 << 22) ? bytes : ((size_t)1 << 22);
  unsigned char *h = kt_halloc(first);
  for (size_t b = 0; b < first; b++) h[b] = ((const unsigned char *)pat)[b % patbytes];
  KT_CUDA_CHECK(cudaMemcpy(d, h, first, cudaMemcpyHostToDevice));
  for (size_t done = first; done < bytes;) {
    const size_t n = done < bytes - done ? done : bytes - done;
    KT_CUDA_CHECK(cudaMemcpy(d + done, d, n, cudaMemcpyDeviceToDevice));
    done += n;
  }
}

/* Checks elements [from, to) of a huge output row against want. */
static void huge_check_y(const rowcase *c, const unsigned char *row_d, int64_t from, int64_t to, double want,
                         const char *where)
{
  const size_t bytes = (size_t)((to - from) * c->es);
  unsigned char *h = kt_halloc(bytes);
  KT_CUDA_CHECK(cudaMemcpy(h, row_d + from * c->es, bytes, cudaMemcpyDeviceToHost));
  const double tol = y_rtol(c->dt) * fabs(want) + y_atol(c->dt);
  unsigned char rounded[4];   /* want as the dtype holds it: past f16's range, an infinity */
  const double held = kt_store(c->dt, rounded, 0, (float)want);
  for (int64_t j = 0; j < to - from; j++) {
    const double got = kt_load(c->dt, h, j);
    if (isinf(held) && got == held) continue;
    if (isnan(got) || !(fabs(got - want) <= tol))
      ck_abort_msg("%s: y[%lld] = %.9g, want %.9g", where, (long long)(from + j), got, want);
  }
}

/* One row of n_max elements (2^30 for the streaming variants) through each
   variant whose n_max is past the sizes the variants case runs: constant inputs, so the reference is exact; the element after the
   row is NaN (a read past the end poisons the result) and y's guard must stay
   untouched (a write past the end).  Runs in a process of its own (see
   longest_row below), so that a kernel fault here cannot take the other
   cases' CUDA context with it. */
START_TEST(longest_row_here)
{
  context_ok();
  const int32_t vi = (int32_t)_i;
  kite_variant_info info;
  KT_KITE_OK(kite_variant_get(vi, &info));
  const int op = op_of(info.op);
  ck_assert_msg(op >= 0 && info.n_max > 262144, "%s is not a long-row variant", info.name);
  const int64_t N = info.n_max;
  rowcase c = rc_new(op, info.dtype, info.name, 1, N);
  const int es = c.es;
  const int64_t off = info.align > es ? 16 / es : 1;   /* unaligned base for element-wise variants */
  c.xoff = c.yoff = c.woff = off;
  c.ldx = c.ldy = round_up(N, off);   /* one row, but the stride must suit the variant */
  c.aux = 1;
  const size_t bytes = (size_t)((off + N + GUARD) * es);
  char where[160];
  snprintf(where, sizeof where, "%s M=1 N=%lld", info.name, (long long)N);

  /* x: 1.0 (rmsnorm; softmax_bwd's y, with dy 1.0: dx = 1 - N, the sum exact in f32 for
     N = 2^30) or 0.0 (softmax, cross-entropy: exp(x - max) is exactly 1) */
  unsigned char one[4];
  kt_store(c.dt, one, 0, op == OP_RMSNORM || op == OP_SOFTMAX_BWD ? 1.f : 0.f);
  c.xd = kt_dalloc(bytes);
  dev_fill(c.xd, bytes, one, (size_t)es);
  KT_CUDA_CHECK(cudaMemset(c.xd, POISON, (size_t)(off * es)));
  KT_CUDA_CHECK(cudaMemset(c.xd + (off + N) * es, POISON, (size_t)(GUARD * es)));
  if (op == OP_RMSNORM) {
    c.wd = kt_dalloc(bytes);
    kt_store(c.dt, one, 0, 1.f);
    dev_fill(c.wd, bytes, one, (size_t)es);
    KT_CUDA_CHECK(cudaMemset(c.wd + (off + N) * es, POISON, (size_t)(GUARD * es)));
  }
  if (op == OP_SOFTMAX_BWD) {
    c.dyd = kt_dalloc(bytes);
    c.dyoff = off;
    c.lddy = c.ldx;
    dev_fill(c.dyd, bytes, one, (size_t)es);
    KT_CUDA_CHECK(cudaMemset(c.dyd + (off + N) * es, POISON, (size_t)(GUARD * es)));
  }
  if (op != OP_CE) {
    c.yd = kt_dalloc(bytes);
    KT_CUDA_CHECK(cudaMemset(c.yd, POISON, bytes));
  }
  if (op == OP_CE || op == OP_CE_BWD) {
    c.th = kt_halloc(3 * sizeof(int64_t));
    c.th[0] = N - 1;   /* the last element */
    c.td = kt_dalloc(3 * sizeof(int64_t));
    KT_CUDA_CHECK(cudaMemcpy(c.td + 1, c.th, sizeof(int64_t), cudaMemcpyHostToDevice));
  }
  const size_t fb = (size_t)(1 + GUARD) * sizeof(float);
  c.rstd_d = kt_dalloc(fb);
  c.loss_d = kt_dalloc(fb);
  c.lse_d = kt_dalloc(fb);
  KT_CUDA_CHECK(cudaMemset(c.rstd_d, POISON, fb));
  KT_CUDA_CHECK(cudaMemset(c.loss_d, POISON, fb));
  KT_CUDA_CHECK(cudaMemset(c.lse_d, POISON, fb));
  if (op == OP_CE_BWD) {   /* the forward's lse of a row of zeros, log N; no dloss (1) */
    const float lse = logf((float)N);
    KT_CUDA_CHECK(cudaMemcpy(c.lse_d + 1, &lse, 4, cudaMemcpyHostToDevice));
    c.aux = 0;
  }
  KT_CUDA_CHECK(cudaDeviceSynchronize());

  rc_run(&c);

  float f[2];
  double want_y = 0;
  if (op == OP_RMSNORM) {
    const double rs = 1.0 / sqrt(1.0 + (double)c.eps);
    KT_CUDA_CHECK(cudaMemcpy(f, c.rstd_d + 1, 4, cudaMemcpyDeviceToHost));
    ck_assert_msg(fabs(f[0] - rs) <= RSTD_RTOL * rs, "%s: rstd %.9g, want %.9g", where, (double)f[0], rs);
    want_y = (double)kt_store(c.dt, one, 0, (float)rs);
  } else if (op == OP_SOFTMAX) {
    want_y = 1.0 / (double)N;
  } else if (op == OP_SOFTMAX_BWD) {
    want_y = 1.0 - (double)N;
  } else if (op == OP_CE_BWD) {
    want_y = 1.0 / (double)N;   /* but at the target, the last element: 1/N - 1 */
  } else {
    const double lse = log((double)N), tol = ce_tol(c.dt) * (1 + lse);
    KT_CUDA_CHECK(cudaMemcpy(&f[0], c.loss_d + 1, 4, cudaMemcpyDeviceToHost));
    KT_CUDA_CHECK(cudaMemcpy(&f[1], c.lse_d + 1, 4, cudaMemcpyDeviceToHost));
    ck_assert_msg(fabs(f[1] - lse) <= tol, "%s: lse %.9g, want %.9g", where, (double)f[1], lse);
    ck_assert_msg(fabs(f[0] - lse) <= tol, "%s: loss %.9g, want %.9g", where, (double)f[0], lse);
  }
  if (op != OP_CE) {
    const unsigned char *row = c.yd + off * es;
    const int64_t w = (int64_t)1 << 20, end = op == OP_CE_BWD ? N - 1 : N;   /* cross_entropy_bwd: */
    huge_check_y(&c, row, 0, w, want_y, where);                               /* the target apart */
    huge_check_y(&c, row, N - w, end, want_y, where);
    if (end < N) huge_check_y(&c, row, end, N, want_y - 1.0, where);
    kt_rng r = kt_rng_for("longest", vi);
    for (int k = 0; k < 8; k++) {
      const int64_t at = kt_range(&r, 0, N - 4096);
      huge_check_y(&c, row, at, at + 4096 < end ? at + 4096 : end, want_y, where);
    }
    unsigned char guard[GUARD * 4], before[64];
    KT_CUDA_CHECK(cudaMemcpy(guard, row + N * es, (size_t)(GUARD * es), cudaMemcpyDeviceToHost));
    expect_poison(guard, 0, (size_t)(GUARD * es), POISON, "y after the row", where);
    KT_CUDA_CHECK(cudaMemcpy(before, c.yd, (size_t)(off * es), cudaMemcpyDeviceToHost));
    expect_poison(before, 0, (size_t)(off * es), POISON, "y before the row", where);
  }
  printf("longest row: %s N=%lld ok\n", info.name, (long long)N);
  fflush(stdout);
}
END_TEST

/* Runs longest_row_here(i) in a new process: this binary again, with
   KITE_TEST_LONGEST=i (and the same seed) in its environment. */
START_TEST(longest_row)
{
  context_ok();
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ck_assert_msg(n > 0, "readlink(/proc/self/exe) failed");
  exe[n] = '\0';
  char which[32], seed[48];
  snprintf(which, sizeof which, "KITE_TEST_LONGEST=%d", (int)_i);
  snprintf(seed, sizeof seed, "KITE_TEST_SEED=%llu", (unsigned long long)kt_seed());
  int nenv = 0;
  while (environ[nenv]) nenv++;
  char **env = kt_halloc((size_t)(nenv + 3) * sizeof *env);
  int k = 0;
  for (int e = 0; e < nenv; e++)
    if (strncmp(environ[e], "KITE_TEST_", 10) != 0 && strncmp(environ[e], "CK_", 3) != 0) env[k++] = environ[e];
  env[k++] = which;
  env[k++] = seed;
  env[k] = NULL;
  char *argv[] = { exe, NULL };
  fflush(stdout);
  fflush(stderr);
  pid_t pid;
  const int rc = posix_spawn(&pid, exe, NULL, NULL, argv, env);
  ck_assert_msg(rc == 0, "posix_spawn(%s): %s", exe, strerror(rc));
  int status = 0;
  ck_assert_msg(waitpid(pid, &status, 0) == pid, "waitpid failed");
  kite_variant_info info;
  KT_KITE_OK(kite_variant_get((int32_t)_i, &info));
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "%s at N=%lld failed in its own process (%s %d); its messages are above", info.name, (long long)info.n_max,
                WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}
END_TEST

/* The child: longest_row_here(i) alone, quietly; its failures printed as lines
   that tests/run.sh does not count (the parent's case counts once). */
static int longest_row_child(int i)
{
  char why[256];
  if (!kt_gpu_usable(why, sizeof why)) {
    printf("longest row child: no usable GPU (%s)\n", why);
    return 1;
  }
  Suite *s = suite_create("longest");
  tcase_add_loop_test(kt_gpu_tcase(s, "longest"), longest_row_here, i, i + 1);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_SILENT);
  const int failed = srunner_ntests_failed(sr);
  TestResult **tr = srunner_failures(sr);
  for (int k = 0; k < failed; k++)
    printf("longest row child: FAILED at %s:%d: %s\n", tr_lfile(tr[k]), tr_lno(tr[k]), tr_msg(tr[k]));
  free(tr);
  srunner_free(sr);
  fflush(stdout);
  return failed == 0 ? 0 : 1;
}

/* ---- the launch helpers ------------------------------------------------------------------ */

START_TEST(device_sms_matches_the_device)
{
  int dev, want = 0, got = 0, again = 0;
  KT_CUDA_CHECK(cudaGetDevice(&dev));
  KT_CUDA_CHECK(cudaDeviceGetAttribute(&want, cudaDevAttrMultiProcessorCount, dev));
  KT_CUDA_CHECK(kite__device_sms(&got));
  KT_CUDA_CHECK(kite__device_sms(&again));
  ck_assert_int_eq(got, want);
  ck_assert_int_eq(again, want);
}
END_TEST

/* The measured set in use is the one the device's name picks (unless
   KITE_GPU overrides it), and kite_explain says so. */
START_TEST(measured_set_matches_the_device)
{
  int dev;
  struct cudaDeviceProp p;
  enum kite_table_how how;
  char buf[2048];
  KT_CUDA_CHECK(cudaGetDevice(&dev));
  KT_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  const struct kite_gpu_table *t = kite__table(&how);
  KT_KITE_OK(kite_explain("rmsnorm", KITE_BF16, 4, 4096, 0, buf, sizeof buf));
  printf("measured set: device %s, %s\n", p.name, strrchr(buf, '['));
  fflush(stdout);
  if (getenv("KITE_GPU")) return;
  ck_assert_int_eq(how, KITE_TABLE_DEVICE);
  ck_assert_ptr_eq(t, &kite_gpu_tables[kite__table_for_device(p.name)]);
  ck_assert_msg(strstr(buf, "(device ") || strstr(buf, "(no table for device "), "%s", buf);
  ck_assert_msg(strstr(buf, p.name) != NULL, "%s", buf);
}
END_TEST

static void *device_record_worker(void *arg)
{
  const struct kite_device **d = arg;
  if (kite__device(d) != cudaSuccess) *d = NULL;
  return NULL;
}

/* kite__device's record holds what CUDA says of the device, and every thread
   gets the same one (filled once). */
START_TEST(device_record_is_cudas_and_kept)
{
  int dev, sms, major, minor;
  const struct kite_device *d = NULL, *again = NULL, *th_d[4] = { 0 };
  KT_CUDA_CHECK(cudaGetDevice(&dev));
  KT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  KT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  KT_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  KT_CUDA_CHECK(kite__device(&d));
  ck_assert_int_eq(d->id, dev);
  ck_assert_int_eq(d->sms, sms);
  ck_assert_int_eq(d->major, major);
  ck_assert_int_eq(d->minor, minor);
  ck_assert_int_eq(d->table, kite__table_for_device(d->name));
  KT_CUDA_CHECK(kite__device(&again));
  ck_assert_ptr_eq(again, d);
  pthread_t th[4];
  for (int t = 0; t < 4; t++) ck_assert_int_eq(pthread_create(&th[t], NULL, device_record_worker, &th_d[t]), 0);
  for (int t = 0; t < 4; t++) ck_assert_int_eq(pthread_join(th[t], NULL), 0);
  for (int t = 0; t < 4; t++) ck_assert_ptr_eq(th_d[t], d);
}
END_TEST

#define TMAP_KEYS 200   /* more than the cache holds */

/* The map of key i: a distinct base (16 bytes apart) over one buffer. */
static cudaError_t tmap_of(const unsigned char *buf, int i, void *map)
{
  return kite__tmap_2d(map, KITE_BF16, buf + 16 * i, 1000, 1000, 1024, 128, 64, 128);
}

struct tmap_job { const unsigned char *buf; const unsigned char (*want)[128]; int failed, differed, err; };

static void *tmap_worker(void *arg)
{
  struct tmap_job *j = arg;
  _Alignas(64) unsigned char map[128];
  for (int r = 0; r < 5; r++)
    for (int i = 0; i < TMAP_KEYS; i++) {
      const int key = (i * 7 + r) % TMAP_KEYS;
      const cudaError_t e = tmap_of(j->buf, key, map);
      if (e != cudaSuccess) j->failed++, j->err = (int)e;
      else if (memcmp(map, j->want[key], 128) != 0) j->differed++;
    }
  return NULL;
}

/* Encoding works, a cache hit gives the same bytes, distinct keys distinct
   maps; past the cache's size every key still comes back the same, also
   from several threads at once. */
START_TEST(tmap_encodes_and_caches)
{
  const unsigned char *buf = kt_dalloc((size_t)1 << 22);
  static _Alignas(64) unsigned char want[TMAP_KEYS][128];
  _Alignas(64) unsigned char map[128];
  for (int i = 0; i < TMAP_KEYS; i++) KT_CUDA_CHECK(tmap_of(buf, i, want[i]));
  ck_assert_msg(memcmp(want[0], want[1], 128) != 0, "two bases gave the same map");
  for (int i = 0; i < TMAP_KEYS; i++) {
    KT_CUDA_CHECK(tmap_of(buf, i, map));
    ck_assert_msg(memcmp(map, want[i], 128) == 0, "key %d: a second encode (after eviction) differs", i);
  }
  KT_CUDA_CHECK(kite__tmap_2d(map, KITE_BF16, buf, 1000, 1000, 1024, 64, 64, 128));
  ck_assert_msg(memcmp(map, want[0], 128) != 0, "another box gave the same map");
  ck_assert_int_eq(kite__tmap_2d(map, KITE_BF16, buf + 2, 1000, 1000, 1024, 128, 64, 128),
                   cudaErrorInvalidValue);
  pthread_t th[8];
  struct tmap_job jobs[8];
  /* an explicit stack: a thread's default follows RLIMIT_STACK, which can be
     small enough (a sandbox's) that the CUDA runtime's first call in a new
     thread overflows it */
  pthread_attr_t at;
  ck_assert_int_eq(pthread_attr_init(&at), 0);
  ck_assert_int_eq(pthread_attr_setstacksize(&at, (size_t)8 << 20), 0);
  for (int t = 0; t < 8; t++) {
    jobs[t] = (struct tmap_job){ buf, want, 0, 0, 0 };
    ck_assert_int_eq(pthread_create(&th[t], &at, tmap_worker, &jobs[t]), 0);
  }
  pthread_attr_destroy(&at);
  /* every thread joined before any check: a failed check leaves this frame,
     which the threads' jobs live in */
  int joined = 0;
  for (int t = 0; t < 8; t++) joined += pthread_join(th[t], NULL) == 0;
  ck_assert_int_eq(joined, 8);
  for (int t = 0; t < 8; t++)
    ck_assert_msg(jobs[t].failed == 0 && jobs[t].differed == 0, "thread %d: %d maps failed (last: %s), %d differed",
                  t, jobs[t].failed, cudaGetErrorString((cudaError_t)jobs[t].err), jobs[t].differed);
}
END_TEST

/* ---- the end --------------------------------------------------------------------------- */

START_TEST(no_cuda_error_left)
{
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  KT_CUDA_CHECK(cudaGetLastError());
  KT_CUDA_CHECK(cudaPeekAtLastError());
}
END_TEST



/* Whether variant i gets a case here: every variant but the gemm ones, which
   test_gemm runs, and rmsnorm_bwd's, rmsnorm_res's, layernorm's and
   layernorm_bwd's, which test_norm runs (an op this file has no reference
   for fails loudly rather than going untested); `huge`: only those past 262144 elements.
   KITE_TEST_ONLY=<glob> keeps the variants it names and drops the cases that
   are not a variant's, so that a device run can split the suite over
   processes or re-check what changed. */
static int chosen(int32_t i, int huge)
{
  kite_variant_info info;
  if (kite_variant_get(i, &info) != KITE_OK) return !huge;
  /* test_gemm and test_norm run these */
  if (strcmp(info.op, "gemm") == 0 || strncmp(info.op, "rmsnorm_", 8) == 0 || strncmp(info.op, "layernorm", 9) == 0)
    return 0;
  if (huge && (info.n_max <= 262144 || op_of(info.op) < 0)) return 0;
  const char *only = getenv("KITE_TEST_ONLY");
  return !only || fnmatch(only, info.name, 0) == 0;
}

int main(void)
{
  const char *longest = getenv("KITE_TEST_LONGEST");
  if (longest) return longest_row_child(atoi(longest));
  Suite *s = suite_create("gpu");
  const int nv = kite_variant_count();
  TCase *tv = kt_gpu_tcase(s, "variants");
  for (int32_t i = 0; i < nv; i++)
    if (chosen(i, 0)) KT_ADD_LOOP(tv, variant_matches_reference, i, i + 1);
  TCase *tc;
  if (!getenv("KITE_TEST_ONLY")) {
    tc = kt_gpu_tcase(s, "entry");
    KT_ADD_LOOP(tc, entry_point_at_dispatch_boundaries, 0, OP_COUNT * 3);
    KT_ADD_LOOP(tc, entry_point_in_place, 0, 2 * 3);
    KT_ADD_LOOP(kt_gpu_tcase(s, "targets"), cross_entropy_targets, 0, 1);
    const struct kite_gpu_table *t = kite__table(NULL);   /* the device's (the default without one) */
    if (t->rules_len > 0) KT_ADD_LOOP(kt_gpu_tcase(s, "tuned"), tuned_rule_is_correct, 0, t->rules_len);
    KT_ADD_LOOP(kt_gpu_tcase(s, "invalid"), invalid_calls_touch_nothing, 0, 1);
    tc = kt_gpu_tcase(s, "launch");
    KT_ADD_LOOP(tc, device_sms_matches_the_device, 0, 1);
    KT_ADD_LOOP(tc, measured_set_matches_the_device, 0, 1);
    KT_ADD_LOOP(tc, device_record_is_cudas_and_kept, 0, 1);
    KT_ADD_LOOP(tc, tmap_encodes_and_caches, 0, 1);
  }
  /* the longest rows last but one: a fault there must not hide the others */
  tc = kt_gpu_tcase(s, "huge");
  for (int32_t i = 0; i < nv; i++)
    if (chosen(i, 1)) KT_ADD_LOOP(tc, longest_row, i, i + 1);
  KT_ADD_LOOP(kt_gpu_tcase(s, "final"), no_cuda_error_left, 0, 1);

  char why[256];
  if (!kt_gpu_usable(why, sizeof why)) {
    printf("KITE_SKIPPED: %d (no CUDA device: %s)\n", *kt_ncases(), why);
    srunner_free(srunner_create(s));   /* frees the suite; nothing runs */
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
