/* kite_gemm.c - GEMM: argument checks, the tile heuristic, launch.
 *
 * Dispatch heuristic (until measured rules replace it): a kernel runs its
 * output tiles in waves of one tile per SM, so a variant's time is estimated
 * as
 *     cost = waves * tile_m * tile_n * (K + cost_k) / eff,
 *     waves = ceil(ceil(M / tile_m) * ceil(N / tile_n) / sms),
 * where eff (per mille) and cost_k come with each variant from its
 * template: eff is its throughput relative to the best (a bigger tile
 * reuses every loaded element of A and B more), cost_k the part of a
 * tile's time outside its k-loop (an epilogue that the schedule does not
 * hide), in units of K.  The least cost wins; equal costs go to the lower
 * rank, then the smaller name, so the choice is deterministic. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kite_internal.h"
#include "kite_launch.h"

/* SM count explain assumes without a device (H100 SXM, H200). */
#define KITE_GEMM_DEFAULT_SMS 132

/* TMA fetches rows of A and B in lines of this many bytes.  The alignment
   the dispatch sees is measured up to it: a problem whose pointers or row
   strides are not whole lines ("ragged") runs slower, by a factor measured
   per variant (kite_gemm_model.ragged; gen/kg_fit.c). */
#define KITE_GEMM_LINE 128

/* What kite_explain takes the operands to be: kite_gemm's choice for them. */
#define KITE_GEMM_ASSUMES \
  "assumes dense A and B (lda = ldb = K) at 128-byte-aligned addresses, C of the same dtype as A and B"

/* ---- argument checks ---------------------------------------------------------------- */

static kite_status kite_gemm_check_dtypes(kite_dtype ab, kite_dtype c)
{
  if (kite__dtype_size(ab) == 0 || kite__dtype_size(c) == 0)
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: dtypes %d, %d are not both kite_dtypes", (int)ab,
                      (int)c);
  if ((ab != KITE_BF16 && ab != KITE_F16) || c == KITE_E4M3)
    return kite__fail(KITE_ERR_UNSUPPORTED, "gemm: A/B must be bf16 or f16 (not %s), C bf16, f16 or f32 "
                      "(not %s)", kite__dtype_name(ab), kite__dtype_name(c));
  return KITE_OK;
}

/* Sizes: negative is invalid, any 0 is an empty product (*noop), and the
   kernels index tiles with 32-bit integers. */
static kite_status kite_gemm_check_sizes(int64_t M, int64_t N, int64_t K, int *noop)
{
  if (M < 0 || N < 0 || K < 0)
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: M=%lld, N=%lld, K=%lld must not be negative",
                      (long long)M, (long long)N, (long long)K);
  *noop = M == 0 || N == 0 || K == 0;
  if (!*noop && (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX))
    return kite__fail(KITE_ERR_UNSUPPORTED, "gemm: M=%lld, N=%lld, K=%lld: sizes above 2^31-1",
                      (long long)M, (long long)N, (long long)K);
  return KITE_OK;
}

static kite_status kite_gemm_check_pointers(const kite_gemm_args *a, int esab, int esc)
{
  if (!a->A || !a->B || !a->C)
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: A, B and C must not be NULL");
  if (kite__misaligned(a->A, esab) || kite__misaligned(a->B, esab) || kite__misaligned(a->C, esc))
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: A, B (%d bytes) and C (%d bytes) must be aligned to "
                      "their elements", esab, esc);
  return KITE_OK;
}

/* Strides, sizes in bytes, and C clear of A and B (which may overlap: both are read). */
static kite_status kite_gemm_check_layout(const kite_gemm_args *a, int esab, int esc)
{
  if (a->lda < a->K || a->ldb < a->K || a->ldc < a->N)
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: lda=%lld, ldb=%lld must be >= K=%lld and ldc=%lld >= "
                      "N=%lld", (long long)a->lda, (long long)a->ldb, (long long)a->K, (long long)a->ldc,
                      (long long)a->N);
  if (!kite__fits_memory(a->M, a->K, a->lda, esab) || !kite__fits_memory(a->N, a->K, a->ldb, esab) ||
      !kite__fits_memory(a->M, a->N, a->ldc, esc))
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: A, B or C overflows the address space");
  uintptr_t as[2], bs[2], cs[2];
  kite__span(a->A, a->M, a->K, a->lda, esab, as);
  kite__span(a->B, a->N, a->K, a->ldb, esab, bs);
  kite__span(a->C, a->M, a->N, a->ldc, esc, cs);
  if (kite__spans_overlap(cs, as) || kite__spans_overlap(cs, bs))
    return kite__fail(KITE_ERR_INVALID_ARG, "gemm: C overlaps A or B");
  return KITE_OK;
}

/* Every check kite_gemm makes; *noop is set for an empty product. */
static kite_status kite_gemm_check(kite_dtype ab, kite_dtype c, const kite_gemm_args *a, int *noop)
{
  kite_status s = kite_gemm_check_dtypes(ab, c);
  if (s == KITE_OK) s = kite_gemm_check_sizes(a->M, a->N, a->K, noop);
  if (s != KITE_OK || *noop) return s;
  const int esab = kite__dtype_size(ab), esc = kite__dtype_size(c);
  if ((s = kite_gemm_check_pointers(a, esab, esc)) != KITE_OK) return s;
  return kite_gemm_check_layout(a, esab, esc);
}

/* Alignment A and B offer a variant: the largest power of two, up to
   KITE_GEMM_LINE, dividing their pointers and byte row strides. */
static int32_t kite_gemm_align(const kite_gemm_args *a, int esab)
{
  const void *ptrs[2] = { a->A, a->B };
  const int64_t strides[2] = { a->lda * esab, a->ldb * esab };
  return kite__align_upto(KITE_GEMM_LINE, ptrs, 2, strides, 2);
}

/* Whether rows at this alignment span a line more than they fill (the models' ragged factor). */
static int kite_gemm_ragged(int32_t align)
{
  return align % KITE_GEMM_LINE != 0;
}

/* ---- the heuristic -------------------------------------------------------------------- */

/* Waves of v's tiles over an M x N output on sms SMs; *tiles gets the tile count. */
static int64_t kite_gemm_waves(const struct kite_variant *v, int64_t M, int64_t N, int sms, int64_t *tiles)
{
  const int64_t tm = M < 1 ? 1 : (M - 1) / v->tile_m + 1, tn = N < 1 ? 1 : (N - 1) / v->tile_n + 1;
  *tiles = tm * tn;
  return (*tiles - 1) / (sms < 1 ? 1 : sms) + 1;
}

/* The time model: every wave costs one tile's work, area x (K + cost_k),
   at the variant's efficiency.  Both numbers come from the template (its
   meta, from measurements: templates/lib/gemm_tma.lua), so that the tile
   size, the schedule (an epilogue hidden or not) and the kind weigh in
   the same way. */
static double kite_gemm_cost(const struct kite_variant *v, int64_t M, int64_t N, int64_t K, int sms)
{
  int64_t tiles;
  const double area = (double)v->tile_m * v->tile_n;
  const int eff = v->eff > 0 ? v->eff : 1000;
  return (double)kite_gemm_waves(v, M, N, sms, &tiles) * area * ((double)K + v->cost_k) * 1000.0 / eff;
}

int kite__gemm_fits(const struct kite_variant *v, const void *ctx)
{
  const struct kite_gemm_fit *f = ctx;
  return v->dtype == f->ab && v->dtype_out == f->c && v->align > 0 && f->align % v->align == 0 &&
         v->tile_m > 0 && v->tile_n > 0 && strcmp(v->op, "gemm") == 0;
}

/* a before b: cheaper, then lower rank, then the smaller name. */
static int kite_gemm_better(const struct kite_variant *a, double ca, const struct kite_variant *b, double cb)
{
  if (ca != cb) return ca < cb;
  if (a->rank != b->rank) return a->rank < b->rank;
  return strcmp(a->name, b->name) < 0;
}

const struct kite_variant *kite__gemm_pick(const struct kite_variant *tab, int32_t n, kite_dtype ab,
                                           kite_dtype c, int64_t M, int64_t N, int64_t K,
                                           int32_t align, int sms)
{
  const struct kite_gemm_fit fit = { ab, c, align };
  const struct kite_variant *best = NULL;
  double best_cost = 0;
  for (int32_t i = 0; i < n; i++) {
    const struct kite_variant *v = &tab[i];
    if (!kite__gemm_fits(v, &fit)) continue;
    const double cost = kite_gemm_cost(v, M, N, K, sms);
    if (!best || kite_gemm_better(v, cost, best, best_cost)) {
      best = v;
      best_cost = cost;
    }
  }
  return best;
}

/* ---- the measured model (bench/tuned/<gpu>.times.tsv, fitted by kite-gen) ---------------- */

/* What model m predicts for its variant v on M x N x K over sms SMs, A and
   B aligned to align bytes, in us. */
static double kite_gemm_model_us(const struct kite_gemm_model *m, const struct kite_variant *v, int64_t M,
                                 int64_t N, int64_t K, int32_t align, int sms)
{
  int64_t tiles;
  const double t = (double)m->launch_us + (double)kite_gemm_waves(v, M, N, sms, &tiles) *
                                              ((double)K + m->k_extra) * (double)m->us_per_k;
  return kite_gemm_ragged(align) ? t * m->ragged : t;
}

const struct kite_gemm_model *kite__gemm_model_pick(const struct kite_gemm_model *models, int32_t nmodels,
                                                    const struct kite_variant *tab, int32_t ntab, kite_dtype ab,
                                                    kite_dtype c, int64_t M, int64_t N, int64_t K, int32_t align,
                                                    int sms, double *us)
{
  const struct kite_gemm_fit fit = { ab, c, align };
  const struct kite_gemm_model *best = NULL;
  double best_us = 0;
  for (int32_t i = 0; i < nmodels; i++) {
    const struct kite_gemm_model *m = &models[i];
    if (m->variant < 0 || m->variant >= ntab || !kite__gemm_fits(&tab[m->variant], &fit)) continue;
    const double t = kite_gemm_model_us(m, &tab[m->variant], M, N, K, align, sms);
    if (!best || t < best_us) {
      best = m;
      best_us = t;
    }
  }
  if (us) *us = best_us;
  return best;
}

/* ---- entry points ----------------------------------------------------------------------- */

/* How far (log2, in each of M, N and K) a tuned gemm rule reaches from its
   own shape.  The tuning grid's points are 4x apart, and between them the
   nearest point's variant did worse than the heuristic: on 30 held-out
   shapes (H200, session 6, bench/NOTES.md) 1.19x the best variant's time in
   geomean (worst 2.05x) against the heuristic's 1.08x (worst 1.55x). */
#define KITE_GEMM_RULE_REACH 0.25f   /* elsewhere the measured model or the heuristic picks */

static int kite_gemm_within(int64_t x, float lx)
{
  return fabsf(kite__log2(x) - lx) <= KITE_GEMM_RULE_REACH;
}

/* kite__gemm_rule over set t. */
static const struct kite_rule *kite_gemm_rule_in(const struct kite_gpu_table *t, kite_dtype ab, kite_dtype c,
                                                 int64_t M, int64_t N, int64_t K, int32_t align)
{
  const struct kite_gemm_fit fit = { ab, c, align };
  int32_t lo, hi;
  kite__rule_range(t, "gemm", &lo, &hi);
  const struct kite_rule *r = kite__rule_pick(t->rules + lo, hi - lo, kite_variants, kite_variants_len, "gemm",
                                              ab, c, M, N, K, kite__gemm_fits, &fit);
  if (r && kite_gemm_within(M, r->lm) && kite_gemm_within(N, r->ln) && kite_gemm_within(K, r->lk)) return r;
  return NULL;
}

const struct kite_rule *kite__gemm_rule(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int64_t K,
                                        int32_t align)
{
  return kite_gemm_rule_in(kite__table(NULL), ab, c, M, N, K, align);
}

/* How kite_gemm_choose decided. */
struct kite_gemm_why {
  const struct kite_rule *rule;           /* a tuned rule reached the problem */
  const struct kite_gemm_model *model;    /* else the measured model's fastest fit */
  double model_us;                        /* what it predicted */
  const struct kite_gpu_table *table;     /* the measured set that held them */
  enum kite_table_how how;                /* how kite__table chose it */
};

/* The variant for a problem, kite__pick's counterpart: the tuned rule that
   reaches it, else the fitting variant the measured models predict fastest,
   else the heuristic over the table's gemm rows on sms SMs (why says which);
   NULL if nothing fits. */
static const struct kite_variant *kite_gemm_choose(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int64_t K,
                                                   int32_t align, int sms, struct kite_gemm_why *why)
{
  const struct kite_gpu_table *t = why->table = kite__table(&why->how);
  why->rule = kite_gemm_rule_in(t, ab, c, M, N, K, align);
  why->model = NULL;
  if (why->rule) return &kite_variants[why->rule->variant];
  why->model = kite__gemm_model_pick(t->models, t->models_len, kite_variants, kite_variants_len, ab, c, M, N, K,
                                     align, sms, &why->model_us);
  if (why->model) return &kite_variants[why->model->variant];
  int32_t lo, hi;
  kite__op_range("gemm", &lo, &hi);
  return kite__gemm_pick(kite_variants + lo, hi - lo, ab, c, M, N, K, align, sms);
}

/* The last choice of this thread: a model step costs 0.5-0.9 us, as much as
   the rest of the call, and a program calls the same shapes over and over.
   The table is constant, so the same problem in the same measured set always
   gets the same variant; per thread, so no lock. */
struct kite_gemm_memo {
  const struct kite_gpu_table *table;
  kite_dtype ab, c;
  int64_t M, N, K;
  int32_t align;
  int sms;
  const struct kite_variant *v;
};

static _Thread_local struct kite_gemm_memo kite_gemm_last;

const struct kite_variant *kite__gemm_choice(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int64_t K,
                                             int32_t align, int sms)
{
  struct kite_gemm_memo *m = &kite_gemm_last;
  const struct kite_gpu_table *t = kite__table(NULL);
  if (m->v && m->table == t && m->ab == ab && m->c == c && m->M == M && m->N == N && m->K == K && m->align == align &&
      m->sms == sms)
    return m->v;
  struct kite_gemm_why why;
  const struct kite_variant *v = kite_gemm_choose(ab, c, M, N, K, align, sms, &why);
  *m = (struct kite_gemm_memo){ t, ab, c, M, N, K, align, sms, v };
  return v;
}

kite_status kite_gemm(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int64_t K, float alpha,
                      const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                      void *C, int64_t ldc, cudaStream_t stream)
{
  const kite_gemm_args a = { .M = M, .N = N, .K = K, .alpha = alpha, .beta = beta,
                             .A = A, .lda = lda, .B = B, .ldb = ldb, .C = C, .ldc = ldc };
  int noop, sms = 0;
  kite_status s = kite_gemm_check(ab, c, &a, &noop);
  if (s != KITE_OK || noop) return s;
  const int32_t align = kite_gemm_align(&a, kite__dtype_size(ab));
  /* Without an SM count the launch fails anyway; NO_KERNEL is reported first. */
  const cudaError_t e = kite__device_sms(&sms);
  const struct kite_variant *v = kite__gemm_choice(ab, c, M, N, K, align, e == cudaSuccess ? sms : 1);
  if (!v)
    return kite__fail(KITE_ERR_NO_KERNEL, "gemm: no generated variant for %s x %s -> %s with %d-byte-"
                      "aligned A, B and strides (was out/ filtered?)", kite__dtype_name(ab),
                      kite__dtype_name(ab), kite__dtype_name(c), (int)align);
  if (e != cudaSuccess)
    return kite__fail(KITE_ERR_CUDA, "gemm: SM count of the device: %s", cudaGetErrorString(e));
  return kite__launch(v, &a, stream);
}

kite_status kite__gemm_run_variant(const struct kite_variant *v, const kite_gemm_args *a, cudaStream_t stream)
{
  int noop;
  kite_status s = kite_gemm_check(v->dtype, v->dtype_out, a, &noop);
  if (s != KITE_OK || noop) return s;
  if (v->align < 1 || kite_gemm_align(a, kite__dtype_size(v->dtype)) % v->align != 0)
    return kite__fail(KITE_ERR_UNSUPPORTED, "%s needs %d-byte-aligned A, B, lda and ldb (in bytes)", v->name,
                      (int)v->align);
  return kite__launch(v, a, stream);
}

kite_status kite__gemm_explain(kite_dtype dtype, int64_t M, int64_t N, int64_t K, char *buf, size_t len)
{
  int noop, sms = 0;
  kite_status s = kite_gemm_check_dtypes(dtype, dtype);
  if (s == KITE_OK) s = kite_gemm_check_sizes(M, N, K, &noop);
  if (s != KITE_OK) return s;
  const char *d = kite__dtype_name(dtype);
  if (noop) {
    snprintf(buf, len, "gemm %s M=%lld N=%lld K=%lld: nothing to do (empty product), no launch", d,
             (long long)M, (long long)N, (long long)K);
    return KITE_OK;
  }
  const int have_sms = kite__device_sms(&sms) == cudaSuccess;
  if (!have_sms) sms = KITE_GEMM_DEFAULT_SMS;
  struct kite_gemm_why why;
  /* kite_gemm's choice for dense operands where cudaMalloc puts them */
  const kite_gemm_args dense = { .M = M, .N = N, .K = K, .A = (void *)KITE_GEMM_LINE, .lda = K,
                                 .B = (void *)KITE_GEMM_LINE, .ldb = K };
  const int32_t align = kite_gemm_align(&dense, kite__dtype_size(dtype));
  const struct kite_variant *v = kite_gemm_choose(dtype, dtype, M, N, K, align, sms, &why);
  const struct kite_rule *r = why.rule;
  if (!v) return kite__fail(KITE_ERR_NO_KERNEL, "gemm: no generated variant for %s -> %s", d, d);
  int64_t tiles;
  const int64_t waves = kite_gemm_waves(v, M, N, sms, &tiles);
  if (why.model) {
    const struct kite_gemm_model *m = why.model;
    char ragged[64] = "";
    if (kite_gemm_ragged(align))
      snprintf(ragged, sizeof ragged, ", times %.3g: rows not whole %d-byte lines", (double)m->ragged,
               KITE_GEMM_LINE);
    snprintf(buf, len, "gemm %s M=%lld N=%lld K=%lld: %s (measured model: least predicted time, %.1f us = "
             "(%.2f us + %lld wave%s * (K + %.0f) * %.3g us%s); tile %dx%d, %lld tile%s on %d SMs%s; fitted to %d "
             "measured shapes; " KITE_GEMM_ASSUMES ")", d, (long long)M, (long long)N, (long long)K, v->name,
             why.model_us, (double)m->launch_us, (long long)waves, waves == 1 ? "" : "s", (double)m->k_extra,
             (double)m->us_per_k, ragged, (int)v->tile_m, (int)v->tile_n, (long long)tiles, tiles == 1 ? "" : "s",
             sms, have_sms ? "" : " (assumed: no device)", (int)m->points);
  } else if (r) {
    snprintf(buf, len, "gemm %s M=%lld N=%lld K=%lld: %s (tuned rule: nearest tuned shape %lldx%lldx%lld in "
             "log2 space, where it ran %.1f us, the fastest measured; " KITE_GEMM_ASSUMES ")", d, (long long)M,
             (long long)N, (long long)K, v->name, (long long)r->m, (long long)r->n, (long long)r->k, (double)r->time_us);
  } else {
    snprintf(buf, len, "gemm %s M=%lld N=%lld K=%lld: %s (heuristic: least waves * tile area * (K + cost_k) / "
             "efficiency; tile %dx%d, %lld tile%s, %lld wave%s on %d SMs%s, efficiency %d/1000, cost_k %d; "
             KITE_GEMM_ASSUMES ")", d, (long long)M, (long long)N, (long long)K, v->name, (int)v->tile_m,
             (int)v->tile_n, (long long)tiles, tiles == 1 ? "" : "s", (long long)waves, waves == 1 ? "" : "s", sms,
             have_sms ? "" : " (assumed: no device)", (int)v->eff, (int)v->cost_k);
  }
  kite__explain_table(why.table, why.how, buf, len);
  return KITE_OK;
}
