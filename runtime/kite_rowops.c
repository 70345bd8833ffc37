/* kite_rowops.c - the row-wise ops: argument checks, dispatch, launch. */
#include <math.h>
#include <string.h>

#include "kite_internal.h"
#include "kite_launch.h"

/* What an op reads and writes besides x. */
enum { KITE_ROW_Y = 1, KITE_ROW_W = 2, KITE_ROW_CE = 4, KITE_ROW_DY = 8, KITE_ROW_LSE = 16, KITE_ROW_DW = 32,
       KITE_ROW_RES = 64, KITE_ROW_LN = 128 };

/* x_name, y_name: what the op's entry point calls the tensors in x and y;
   sums: the sums over rows it makes into partial rows (dw, db), each CTA one
   partial row per sum. */
struct kite_row_op {
  const char *name;
  int uses;
  const char *x_name, *y_name;
  int sums;
};

static const struct kite_row_op kite_row_ops[] = {
  { "rmsnorm", KITE_ROW_Y | KITE_ROW_W, "x", "y", 0 },
  { "softmax", KITE_ROW_Y, "x", "y", 0 },
  { "cross_entropy", KITE_ROW_CE, "x", "y", 0 },
  { "softmax_bwd", KITE_ROW_Y | KITE_ROW_DY, "y", "dx", 0 },
  { "cross_entropy_bwd", KITE_ROW_Y | KITE_ROW_LSE, "x", "dx", 0 },
  { "rmsnorm_bwd", KITE_ROW_Y | KITE_ROW_W | KITE_ROW_DY | KITE_ROW_DW, "x", "dx", 1 },
  { "layernorm_bwd", KITE_ROW_Y | KITE_ROW_W | KITE_ROW_DY | KITE_ROW_DW | KITE_ROW_LN, "x", "dx", 2 },
  { "rmsnorm_res", KITE_ROW_Y | KITE_ROW_W | KITE_ROW_RES, "x", "y", 0 },
  { "layernorm", KITE_ROW_Y | KITE_ROW_W | KITE_ROW_LN, "x", "y", 0 },
};

/* Ops kite does not know (a user's own template) follow the plain x -> y contract. */
static const struct kite_row_op kite_row_generic = { "row op", KITE_ROW_Y, "x", "y", 0 };

static const struct kite_row_op *kite_row_op_of(const char *name)
{
  for (size_t i = 0; i < sizeof kite_row_ops / sizeof kite_row_ops[0]; i++)
    if (strcmp(kite_row_ops[i].name, name) == 0) return &kite_row_ops[i];
  return &kite_row_generic;
}

/* Whether a backward call asks for sums over rows (dw, db). */
static int kite_row_sums_asked(const kite_row_args *a) { return a->dw || a->db; }

static kite_status kite_check_pointers(const struct kite_row_op *op, const kite_row_args *a, int es)
{
  if (!a->x) return kite__fail(KITE_ERR_INVALID_ARG, "%s: %s is NULL", op->name, op->x_name);
  if ((op->uses & KITE_ROW_Y) && !a->y)
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: %s is NULL", op->name, op->y_name);
  if ((op->uses & KITE_ROW_W) && !a->w) return kite__fail(KITE_ERR_INVALID_ARG, "%s: w is NULL", op->name);
  if ((op->uses & KITE_ROW_DY) && !a->dy) return kite__fail(KITE_ERR_INVALID_ARG, "%s: dy is NULL", op->name);
  if ((op->uses & KITE_ROW_CE) && (!a->target || !a->loss))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: target and loss must not be NULL", op->name);
  if ((op->uses & KITE_ROW_LSE) && (!a->target || !a->lse))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: target and lse must not be NULL", op->name);
  if ((op->uses & KITE_ROW_RES) && !a->res)
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: residual is NULL", op->name);
  if ((op->uses & KITE_ROW_RES) && (kite__misaligned(a->res, es) || kite__misaligned(a->h, es)))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: residual and h must be aligned to their %d-byte elements",
                      op->name, es);
  if ((op->uses & KITE_ROW_LN) && (op->uses & KITE_ROW_DW) && !a->mean)
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: mean (the forward's) is NULL", op->name);
  if ((op->uses & KITE_ROW_LN) && (kite__misaligned(a->b, es) || kite__misaligned(a->mean, 4)))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: b must be aligned to its %d-byte elements, mean to 4 bytes",
                      op->name, es);
  if ((op->uses & KITE_ROW_DW) && !a->rstd)
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: rstd (the forward's) is NULL", op->name);
  if ((op->uses & KITE_ROW_DW) && kite_row_sums_asked(a) && (!a->partials || a->parts < 1))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: %s needs a workspace (partials NULL or parts=%lld)", op->name,
                      op->sums > 1 ? "dw or db" : "dw", (long long)a->parts);
  const void *y = (op->uses & KITE_ROW_Y) ? a->y : NULL, *w = (op->uses & KITE_ROW_W) ? a->w : NULL;
  const void *dy = (op->uses & KITE_ROW_DY) ? a->dy : NULL;
  if (kite__misaligned(a->x, es) || kite__misaligned(y, es) || kite__misaligned(w, es) ||
      kite__misaligned(dy, es))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: %s, %s%s must be aligned to their %d-byte elements",
                      op->name, op->x_name, op->y_name, (op->uses & KITE_ROW_W) ? ", w" : dy ? ", dy" : "", es);
  const int ce = op->uses & KITE_ROW_CE, ceb = op->uses & KITE_ROW_LSE;
  const void *rstd = (op->uses & KITE_ROW_W) ? a->rstd : NULL;
  if ((op->uses & KITE_ROW_DW) && (kite__misaligned(a->dw, 4) || kite__misaligned(a->db, 4) ||
                                   kite__misaligned(kite_row_sums_asked(a) ? a->partials : NULL, 16)))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: %s must be 4-byte aligned and the workspace 16-byte aligned",
                      op->name, op->sums > 1 ? "dw and db" : "dw");
  if (kite__misaligned(rstd, 4) || (ce && (kite__misaligned(a->loss, 4) || kite__misaligned(a->lse, 4) ||
                                         kite__misaligned(a->target, 8))) ||
      (ceb && (kite__misaligned(a->lse, 4) || kite__misaligned(a->dloss, 4) || kite__misaligned(a->target, 8))))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: rstd, loss, lse, dloss (4 bytes) or target (8 bytes) misaligned",
                      op->name);
  return KITE_OK;
}

/* Output y against an input (x or dy): apart, or the very same rows. */
static int kite_row_apart(const kite_row_args *a, const void *in, int64_t ldin, int es)
{
  if (in == a->y && ldin == a->ldy) return 1;
  uintptr_t is[2], ys[2];
  kite__span(in, a->M, a->N, ldin, es, is);
  kite__span(a->y, a->M, a->N, a->ldy, es, ys);
  return !kite__spans_overlap(is, ys);
}

/* Floats between partial rows (the kernels' partial_ld): N rounded up to 16 bytes. */
static int64_t kite_partial_ld(int64_t n) { return (n + 3) / 4 * 4; }

/* Bytes of `parts` CTAs' partial rows (sums rows each) of n floats. */
static size_t kite_partials_bytes(int64_t parts, int sums, int64_t n)
{
  return (size_t)parts * (size_t)sums * (size_t)kite_partial_ld(n) * sizeof(float);
}

/* dw and db (N floats each, where given), the workspace and dx: pairwise apart. */
static kite_status kite_check_dw(const struct kite_row_op *op, const kite_row_args *a, int es)
{
  uintptr_t sp[4][2];
  const int64_t ld = kite_partial_ld(a->N);
  kite__span(a->y, a->M, a->N, a->ldy, es, sp[0]);
  kite__span(a->partials, a->parts * op->sums, ld, ld, 4, sp[1]);
  kite__span(a->dw, 1, a->N, a->N, 4, sp[2]);
  kite__span(a->db, 1, a->N, a->N, 4, sp[3]);
  for (int i = 0; i < 4; i++)
    for (int j = i + 1; j < 4; j++)
      if (sp[i][0] && sp[j][0] && kite__spans_overlap(sp[i], sp[j]))   /* dw or db may be NULL */
        return kite__fail(KITE_ERR_INVALID_ARG, "%s: %s, the workspace and %s must not overlap", op->name,
                          op->sums > 1 ? "dw, db" : "dw", op->y_name);
  return KITE_OK;
}

/* rmsnorm_res: y apart from the residual and h; h apart from, or the very
   same rows as, x and the residual. */
static int kite_res_apart(const kite_row_args *a, int es)
{
  uintptr_t y[2], r[2], h[2], x[2];
  kite__span(a->y, a->M, a->N, a->ldy, es, y);
  kite__span(a->res, a->M, a->N, a->ldres, es, r);
  kite__span(a->x, a->M, a->N, a->ldx, es, x);
  if (kite__spans_overlap(y, r)) return 0;
  if (!a->h) return 1;
  kite__span(a->h, a->M, a->N, a->ldh, es, h);
  const int h_is_x = a->h == a->x && a->ldh == a->ldx, h_is_r = a->h == a->res && a->ldh == a->ldres;
  return !kite__spans_overlap(y, h) && (h_is_x || !kite__spans_overlap(h, x)) &&
         (h_is_r || !kite__spans_overlap(h, r));
}

static kite_status kite_check_layout(const struct kite_row_op *op, const kite_row_args *a, int es)
{
  int64_t ld = a->ldx;
  const int has_dy = (op->uses & KITE_ROW_DY) != 0;
  if (a->N > INT32_MAX)
    return kite__fail(KITE_ERR_UNSUPPORTED, "%s: N=%lld is above 2^31-1", op->name, (long long)a->N);
  if (a->ldx < a->N || ((op->uses & KITE_ROW_Y) && a->ldy < a->N) || (has_dy && a->lddy < a->N))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: row strides ld%s=%lld, ld%s=%lld%s must be >= N=%lld", op->name,
                      op->x_name, (long long)a->ldx, op->y_name, (long long)a->ldy, has_dy ? ", lddy" : "",
                      (long long)a->N);
  const int res = (op->uses & KITE_ROW_RES) != 0;
  if (res && (a->ldres < a->N || (a->h && a->ldh < a->N)))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: row strides ldres=%lld, ldh=%lld must be >= N=%lld", op->name,
                      (long long)a->ldres, (long long)a->ldh, (long long)a->N);
  if ((op->uses & KITE_ROW_Y) && a->ldy > ld) ld = a->ldy;
  if (has_dy && a->lddy > ld) ld = a->lddy;
  if (res && a->ldres > ld) ld = a->ldres;
  if (res && a->h && a->ldh > ld) ld = a->ldh;
  if (!kite__fits_memory(a->M, a->N, ld, es))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: M=%lld rows of stride %lld overflow the address space",
                      op->name, (long long)a->M, (long long)ld);
  if (!(op->uses & KITE_ROW_Y)) return KITE_OK;
  if (!kite_row_apart(a, a->x, a->ldx, es))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: %s overlaps %s (only the very same rows may alias)", op->name,
                      op->y_name, op->x_name);
  if (has_dy && !kite_row_apart(a, a->dy, a->lddy, es))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: %s overlaps dy (only the very same rows may alias)", op->name,
                      op->y_name);
  if (res && !kite_res_apart(a, es))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: y overlaps the residual or h, or h partly overlaps x or the "
                      "residual (h may be x or the residual itself, y may be x itself)", op->name);
  if ((op->uses & KITE_ROW_DW) && kite_row_sums_asked(a)) return kite_check_dw(op, a, es);
  return KITE_OK;
}

/* Every check an op's entry point makes; *noop is set for an empty problem. */
static kite_status kite_row_check(const struct kite_row_op *op, kite_dtype dtype, const kite_row_args *a,
                                  int *noop)
{
  kite_status s = kite__check_row_dtype(dtype);
  if (s != KITE_OK) return s;
  if (a->M < 0 || a->N < 0)
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: M=%lld and N=%lld must not be negative", op->name,
                      (long long)a->M, (long long)a->N);
  *noop = a->M == 0 || a->N == 0;
  if (*noop) return KITE_OK;
  int es = kite__dtype_size(dtype);
  if ((s = kite_check_pointers(op, a, es)) != KITE_OK) return s;
  if ((s = kite_check_layout(op, a, es)) != KITE_OK) return s;
  if ((op->uses & KITE_ROW_W) && !(isfinite(a->eps) && a->eps >= 0.f))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: eps=%g must be finite and >= 0", op->name, (double)a->eps);
  if ((op->uses & KITE_ROW_W) && !isfinite(a->w_offset))
    return kite__fail(KITE_ERR_INVALID_ARG, "%s: w_offset=%g must be finite", op->name, (double)a->w_offset);
  return KITE_OK;
}

/* Alignment the data offers a variant: the pointers the op uses and, when
   there is more than one row, the row strides. */
static int32_t kite_row_align(const struct kite_row_op *op, const kite_row_args *a, int es)
{
  const int y = (op->uses & KITE_ROW_Y) != 0, w = (op->uses & KITE_ROW_W) != 0, dy = (op->uses & KITE_ROW_DY) != 0;
  const int res = (op->uses & KITE_ROW_RES) != 0, h = res && a->h, b = (op->uses & KITE_ROW_LN) != 0;
  const void *ptrs[7] = { a->x, y ? a->y : NULL, w ? a->w : NULL, dy ? a->dy : NULL, res ? a->res : NULL,
                          h ? a->h : NULL, b ? a->b : NULL };
  const int64_t strides[5] = { a->ldx * es, y ? a->ldy * es : 0, dy ? a->lddy * es : 0, res ? a->ldres * es : 0,
                               h ? a->ldh * es : 0 };
  return kite__align_of(ptrs, 7, strides, a->M > 1 ? 5 : 0);
}

/* The dispatched variant launched on arguments already checked. */
static kite_status kite_row_dispatch(const char *opname, kite_dtype dtype, const kite_row_args *a,
                                     cudaStream_t stream)
{
  const struct kite_row_op *op = kite_row_op_of(opname);
  const struct kite_variant *v = kite__pick(opname, dtype, a->N, kite_row_align(op, a, kite__dtype_size(dtype)),
                                            NULL);
  if (!v)
    return kite__fail(KITE_ERR_NO_KERNEL, "%s: no generated variant for %s N=%lld (was out/ filtered?)",
                      opname, kite__dtype_name(dtype), (long long)a->N);
  return kite__launch(v, a, stream);
}

static kite_status kite_row_run(const char *opname, kite_dtype dtype, const kite_row_args *a,
                                cudaStream_t stream)
{
  int noop;
  const kite_status s = kite_row_check(kite_row_op_of(opname), dtype, a, &noop);
  if (s != KITE_OK || noop) return s;
  return kite_row_dispatch(opname, dtype, a, stream);
}

kite_status kite__row_run_variant(const struct kite_variant *v, const kite_row_args *a, cudaStream_t stream)
{
  const char *name = v->name;
  const struct kite_row_op *op = kite_row_op_of(v->op);
  int noop;
  kite_status s = kite_row_check(op, v->dtype, a, &noop);
  if (s != KITE_OK || noop) return s;
  if (a->N < v->n_min || a->N > v->n_max)
    return kite__fail(KITE_ERR_UNSUPPORTED, "%s takes N in [%lld, %lld], not %lld", name,
                      (long long)v->n_min, (long long)v->n_max, (long long)a->N);
  if (kite_row_align(op, a, kite__dtype_size(v->dtype)) % v->align != 0)
    return kite__fail(KITE_ERR_UNSUPPORTED, "%s needs %d-byte-aligned pointers and row strides", name,
                      (int)v->align);
  return kite__launch(v, a, stream);
}

kite_status kite_rmsnorm_fwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                             const void *w, float eps, void *y, int64_t ldy, float *rstd,
                             cudaStream_t stream)
{
  const kite_row_args a = { .M = M, .N = N, .x = x, .ldx = ldx, .y = y, .ldy = ldy,
                            .w = w, .eps = eps, .rstd = rstd };
  return kite_row_run("rmsnorm", dtype, &a, stream);
}

kite_status kite_rmsnorm_fwd_residual(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                                      const void *residual, int64_t ldres, const void *w, float w_offset,
                                      float eps, void *y, int64_t ldy, void *h, int64_t ldh, float *rstd,
                                      cudaStream_t stream)
{
  const kite_row_args a = { .M = M, .N = N, .x = x, .ldx = ldx, .y = y, .ldy = ldy, .w = w, .eps = eps,
                            .rstd = rstd, .w_offset = w_offset, .res = residual, .ldres = ldres, .h = h,
                            .ldh = ldh };
  if (residual) return kite_row_run("rmsnorm_res", dtype, &a, stream);
  if (h) return kite__fail(KITE_ERR_INVALID_ARG, "rmsnorm_fwd_residual: h is given but the residual is NULL");
  return kite_row_run("rmsnorm", dtype, &a, stream);
}

kite_status kite_layernorm_fwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                               const void *w, const void *b, float eps, void *y, int64_t ldy, float *mean,
                               float *rstd, cudaStream_t stream)
{
  const kite_row_args a = { .M = M, .N = N, .x = x, .ldx = ldx, .y = y, .ldy = ldy, .w = w, .eps = eps,
                            .rstd = rstd, .b = b, .mean = mean };
  return kite_row_run("layernorm", dtype, &a, stream);
}

kite_status kite_softmax_fwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                             void *y, int64_t ldy, cudaStream_t stream)
{
  const kite_row_args a = { .M = M, .N = N, .x = x, .ldx = ldx, .y = y, .ldy = ldy };
  return kite_row_run("softmax", dtype, &a, stream);
}

kite_status kite_cross_entropy_fwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                                   const int64_t *target, int64_t ignore_index, float *loss,
                                   float *lse, cudaStream_t stream)
{
  const kite_row_args a = { .M = M, .N = N, .x = x, .ldx = ldx, .target = target,
                            .ignore_index = ignore_index, .loss = loss, .lse = lse };
  return kite_row_run("cross_entropy", dtype, &a, stream);
}

kite_status kite_softmax_bwd(kite_dtype dtype, int64_t M, int64_t N, const void *y, int64_t ldy,
                             const void *dy, int64_t lddy, void *dx, int64_t lddx, cudaStream_t stream)
{
  const kite_row_args a = { .M = M, .N = N, .x = y, .ldx = ldy, .y = dx, .ldy = lddx, .dy = dy, .lddy = lddy };
  return kite_row_run("softmax_bwd", dtype, &a, stream);
}

kite_status kite_cross_entropy_bwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                                   const int64_t *target, int64_t ignore_index, const float *lse,
                                   const float *dloss, void *dx, int64_t lddx, cudaStream_t stream)
{
  const kite_row_args a = { .M = M, .N = N, .x = x, .ldx = ldx, .y = dx, .ldy = lddx, .target = target,
                            .ignore_index = ignore_index, .lse = (float *)lse, .dloss = dloss };
  return kite_row_run("cross_entropy_bwd", dtype, &a, stream);
}

/* CTAs with partial rows for M rows on sms SMs: at least one per SM, up to
   16 while each CTA still gets 32 rows or more (a partial row costs as
   much as a few rows of the op), never more than M.  A variant launches no
   more of them than fit the GPU at once (its CTAs per SM), so that small
   CTAs still fill it. */
static int64_t kite_row_parts(int64_t M, int sms)
{
  int64_t g = (M + 31) / 32;
  if (g > 16 * (int64_t)sms) g = 16 * (int64_t)sms;
  if (g < sms) g = sms;
  return g < M ? g : M;
}

/* The CTAs with partial rows for M rows (KITE_ERR_CUDA without a device). */
static kite_status kite_row_parts_of(const struct kite_row_op *op, int64_t M, int64_t *parts)
{
  int sms;
  const cudaError_t e = kite__device_sms(&sms);
  if (e != cudaSuccess)
    return kite__fail(KITE_ERR_CUDA, "%s: SM count of the device: %s", op->name, cudaGetErrorString(e));
  *parts = kite_row_parts(M, sms);
  return KITE_OK;
}

/* Bytes of workspace op needs for its sums over M rows of N. */
static kite_status kite_row_workspace(const struct kite_row_op *op, int64_t M, int64_t N, size_t *bytes)
{
  if (!bytes) return kite__fail(KITE_ERR_INVALID_ARG, "%s_workspace: bytes is NULL", op->name);
  *bytes = 0;
  if (M < 0 || N < 0)
    return kite__fail(KITE_ERR_INVALID_ARG, "%s_workspace: M=%lld and N=%lld must not be negative", op->name,
                      (long long)M, (long long)N);
  if (N > INT32_MAX)
    return kite__fail(KITE_ERR_UNSUPPORTED, "%s_workspace: N=%lld is above 2^31-1", op->name, (long long)N);
  if (M == 0 || N == 0) return KITE_OK;
  int64_t parts;
  const kite_status s = kite_row_parts_of(op, M, &parts);
  if (s == KITE_OK) *bytes = kite_partials_bytes(parts, op->sums, N);
  return s;
}

/* A backward op that sums over rows: every check (the sums' overlaps with
   the whole workspace once its size is known), then the launch. */
static kite_status kite_row_bwd_run(const struct kite_row_op *op, kite_dtype dtype, kite_row_args *a,
                                    size_t workspace_bytes, cudaStream_t stream)
{
  int noop;
  a->parts = 1;   /* the overlaps with one CTA's partial rows so far */
  kite_status s = kite_row_check(op, dtype, a, &noop);
  if (s != KITE_OK || noop) return s;
  if (kite_row_sums_asked(a)) {
    if ((s = kite_row_parts_of(op, a->M, &a->parts)) != KITE_OK) return s;
    const size_t need = kite_partials_bytes(a->parts, op->sums, a->N);
    if (workspace_bytes < need)
      return kite__fail(KITE_ERR_INVALID_ARG, "%s: the workspace has %zu bytes, M=%lld N=%lld need %zu "
                        "(kite_%s_workspace)", op->name, workspace_bytes, (long long)a->M, (long long)a->N, need,
                        op->name);
    if ((s = kite_check_dw(op, a, kite__dtype_size(dtype))) != KITE_OK) return s;   /* with all of them */
  }
  return kite_row_dispatch(op->name, dtype, a, stream);
}

kite_status kite_rmsnorm_bwd_workspace(int64_t M, int64_t N, size_t *bytes)
{
  return kite_row_workspace(kite_row_op_of("rmsnorm_bwd"), M, N, bytes);
}

kite_status kite_rmsnorm_bwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                             const void *w, float w_offset, const float *rstd, const void *dy, int64_t lddy,
                             void *dx, int64_t lddx, float *dw, void *workspace, size_t workspace_bytes,
                             cudaStream_t stream)
{
  kite_row_args a = { .M = M, .N = N, .x = x, .ldx = ldx, .y = dx, .ldy = lddx, .w = w, .w_offset = w_offset,
                      .rstd = (float *)rstd, .dy = dy, .lddy = lddy, .dw = dw, .partials = workspace };
  return kite_row_bwd_run(kite_row_op_of("rmsnorm_bwd"), dtype, &a, workspace_bytes, stream);
}

kite_status kite_layernorm_bwd_workspace(int64_t M, int64_t N, size_t *bytes)
{
  return kite_row_workspace(kite_row_op_of("layernorm_bwd"), M, N, bytes);
}

kite_status kite_layernorm_bwd(kite_dtype dtype, int64_t M, int64_t N, const void *x, int64_t ldx,
                               const void *w, const float *mean, const float *rstd, const void *dy,
                               int64_t lddy, void *dx, int64_t lddx, float *dw, float *db, void *workspace,
                               size_t workspace_bytes, cudaStream_t stream)
{
  kite_row_args a = { .M = M, .N = N, .x = x, .ldx = ldx, .y = dx, .ldy = lddx, .w = w, .mean = (float *)mean,
                      .rstd = (float *)rstd, .dy = dy, .lddy = lddy, .dw = dw, .db = db, .partials = workspace };
  return kite_row_bwd_run(kite_row_op_of("layernorm_bwd"), dtype, &a, workspace_bytes, stream);
}
