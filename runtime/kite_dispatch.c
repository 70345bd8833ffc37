/* kite_dispatch.c - choosing a generated variant and launching it. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kite_internal.h"

#define KITE_MAX_ALIGN 16

static _Atomic uint64_t kite_launches;

int32_t kite__align_upto(int32_t cap, const void *const *ptrs, int nptrs, const int64_t *strides, int nstrides)
{
  uint64_t bits = (uint64_t)cap;
  for (int i = 0; i < nptrs; i++)
    bits |= (uint64_t)(uintptr_t)ptrs[i];
  for (int i = 0; i < nstrides; i++)
    bits |= (uint64_t)strides[i];
  return (int32_t)(bits & (~bits + 1));   /* lowest set bit */
}

int32_t kite__align_of(const void *const *ptrs, int nptrs, const int64_t *strides, int nstrides)
{
  return kite__align_upto(KITE_MAX_ALIGN, ptrs, nptrs, strides, nstrides);
}

void kite__span(const void *p, int64_t rows, int64_t n, int64_t ld, int es, uintptr_t span[2])
{
  span[0] = (uintptr_t)p;
  span[1] = span[0] + (uintptr_t)(((rows - 1) * ld + n) * es);
}

int kite__spans_overlap(const uintptr_t a[2], const uintptr_t b[2])
{
  return a[0] < b[1] && b[0] < a[1];
}

int kite__fits_memory(int64_t rows, int64_t n, int64_t ld, int es)
{
  return rows - 1 <= (INT64_MAX / es - n) / ld;
}

int kite__misaligned(const void *p, int bytes)
{
  return p && (uintptr_t)p % (uintptr_t)bytes != 0;
}

/* The table's variants of each op lie in one run (kite-gen writes them op by
   op), and so do each set's rules (kite-gen sorts them by op) and spans: each
   run is found once, so a pick scans its op's rows, not the whole array.  Up
   to KITE_MAX_OPS runs of the first KITE_MAX_TABLES sets are indexed; past
   that, or for an op whose rows are not contiguous, the lookup falls back to
   the whole array. */
#define KITE_MAX_OPS 64
#define KITE_MAX_TABLES 16
struct kite_runs {
  struct { const char *op; int32_t lo, hi; } run[KITE_MAX_OPS];
  int n;   /* -1: the index is unusable, scan everything */
};
static struct kite_runs kite_variant_runs, kite_rule_runs[KITE_MAX_TABLES], kite_span_runs[KITE_MAX_TABLES];
static const struct kite_runs kite_no_runs = { .n = -1 };
static pthread_once_t kite_index_once = PTHREAD_ONCE_INIT;

typedef const char *(*kite_op_at_fn)(const void *rows, int32_t i);

static void kite_index_runs(struct kite_runs *r, kite_op_at_fn op_at, const void *rows, int32_t len)
{
  int n = 0;
  r->n = -1;
  for (int32_t i = 0; i < len; i++) {
    const char *op = op_at(rows, i);
    if (n > 0 && strcmp(r->run[n - 1].op, op) == 0) { r->run[n - 1].hi = i + 1; continue; }
    for (int k = 0; k < n; k++)
      if (strcmp(r->run[k].op, op) == 0) return;   /* not contiguous */
    if (n == KITE_MAX_OPS) return;
    r->run[n].op = op;
    r->run[n].lo = i;
    r->run[n].hi = i + 1;
    n++;
  }
  r->n = n;
}

static const char *kite_variant_op(const void *rows, int32_t i) { return ((const struct kite_variant *)rows)[i].op; }
static const char *kite_rule_op(const void *rows, int32_t i) { return ((const struct kite_rule *)rows)[i].op; }
static const char *kite_span_op(const void *rows, int32_t i) { return ((const struct kite_row_span *)rows)[i].op; }

static void kite_index_all(void)
{
  kite_index_runs(&kite_variant_runs, kite_variant_op, kite_variants, kite_variants_len);
  for (int32_t t = 0; t < kite_gpu_tables_len && t < KITE_MAX_TABLES; t++) {
    const struct kite_gpu_table *g = &kite_gpu_tables[t];
    kite_index_runs(&kite_rule_runs[t], kite_rule_op, g->rules, g->rules_len);
    kite_index_runs(&kite_span_runs[t], kite_span_op, g->spans, g->spans_len);
  }
}

static void kite_run_of(const struct kite_runs *r, int32_t len, const char *op, int32_t *lo, int32_t *hi)
{
  *lo = 0;
  *hi = len;
  for (int k = 0; k < r->n; k++)
    if (strcmp(r->run[k].op, op) == 0) {
      *lo = r->run[k].lo;
      *hi = r->run[k].hi;
      return;
    }
  if (r->n >= 0) *hi = 0;   /* indexed, and no row of op */
}

/* The index of set t's rules (spans: 0) or spans (1). */
static const struct kite_runs *kite_set_runs(const struct kite_gpu_table *t, int spans)
{
  const ptrdiff_t i = t - kite_gpu_tables;
  pthread_once(&kite_index_once, kite_index_all);
  if (i < 0 || i >= KITE_MAX_TABLES || i >= kite_gpu_tables_len) return &kite_no_runs;
  return spans ? &kite_span_runs[i] : &kite_rule_runs[i];
}

void kite__op_range(const char *op, int32_t *lo, int32_t *hi)
{
  pthread_once(&kite_index_once, kite_index_all);
  kite_run_of(&kite_variant_runs, kite_variants_len, op, lo, hi);
}

void kite__rule_range(const struct kite_gpu_table *t, const char *op, int32_t *lo, int32_t *hi)
{
  kite_run_of(kite_set_runs(t, 0), t->rules_len, op, lo, hi);
}

void kite__span_range(const struct kite_gpu_table *t, const char *op, int32_t *lo, int32_t *hi)
{
  kite_run_of(kite_set_runs(t, 1), t->spans_len, op, lo, hi);
}

/* ---- the measured set of the current GPU ---------------------------------------- */

static _Atomic int kite_table_forced = -1;
static pthread_once_t kite_env_once = PTHREAD_ONCE_INIT;
static int kite_env_set = -1;        /* KITE_GPU's set: -1 none asked, -2 it names none */
static char kite_env_name[32];       /* what KITE_GPU said, for kite_explain */

/* Whether the n bytes at a and b match, case aside (ASCII). */
static int kite_same_case_aside(const char *a, const char *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return 0;
  return 1;
}

/* Whether hay holds needle, case aside. */
static int kite_holds(const char *hay, const char *needle)
{
  const size_t n = strlen(needle), m = strlen(hay);
  for (size_t i = 0; i + n <= m; i++)
    if (kite_same_case_aside(hay + i, needle, n)) return 1;
  return 0;
}

int32_t kite__table_for_device(const char *name)
{
  for (int32_t i = 0; i < kite_gpu_tables_len; i++)
    if (kite_gpu_tables[i].gpu[0] && kite_holds(name, kite_gpu_tables[i].gpu)) return i;
  return 0;
}

int32_t kite__table_named(const char *name)
{
  const size_t n = strlen(name);
  for (int32_t i = 0; i < kite_gpu_tables_len; i++)
    if (kite_gpu_tables[i].gpu[0] && strlen(kite_gpu_tables[i].gpu) == n &&
        kite_same_case_aside(kite_gpu_tables[i].gpu, name, n))
      return i;
  return -1;
}

static void kite_env_read(void)
{
  const char *e = getenv(KITE_GPU_ENV);
  if (!e || !*e) return;
  snprintf(kite_env_name, sizeof kite_env_name, "%s", e);
  kite_env_set = kite__table_named(e);
  if (kite_env_set < 0) kite_env_set = -2;
}

void kite__table_force(int32_t i)
{
  atomic_store(&kite_table_forced, i >= 0 && i < kite_gpu_tables_len ? i : -1);
}

const struct kite_gpu_table *kite__table(enum kite_table_how *how)
{
  int i = atomic_load(&kite_table_forced);
  const struct kite_device *d;
  enum kite_table_how h = KITE_TABLE_FORCED;
  if (i < 0) {
    pthread_once(&kite_env_once, kite_env_read);
    i = kite_env_set;
    h = i == -2 ? KITE_TABLE_ENV_UNKNOWN : KITE_TABLE_ENV;
  }
  if (i < 0 && kite__device(&d) == cudaSuccess) {
    h = KITE_TABLE_DEVICE;
    i = d->table;
  }
  if (i < 0) {
    if (h != KITE_TABLE_ENV_UNKNOWN) h = KITE_TABLE_NO_DEVICE;
    i = 0;
  }
  if (how) *how = h;
  return &kite_gpu_tables[i];
}

void kite__table_note(const struct kite_gpu_table *t, enum kite_table_how how, char *buf, size_t len)
{
  const char *name = t->gpu[0] ? t->gpu : "(unnamed)";
  const struct kite_device *d;
  const char *dev = how == KITE_TABLE_DEVICE && kite__device(&d) == cudaSuccess ? d->name : "";
  switch (how) {
  case KITE_TABLE_FORCED: snprintf(buf, len, "table %s (set by the program)", name); break;
  case KITE_TABLE_ENV: snprintf(buf, len, "table %s (" KITE_GPU_ENV "=%s)", name, kite_env_name); break;
  case KITE_TABLE_ENV_UNKNOWN:
    snprintf(buf, len, "table %s, the default (" KITE_GPU_ENV "=%s names no table)", name, kite_env_name);
    break;
  case KITE_TABLE_NO_DEVICE: snprintf(buf, len, "table %s, the default (no device)", name); break;
  default:
    if (t->gpu[0] && kite_holds(dev, t->gpu)) snprintf(buf, len, "table %s (device %s)", name, dev);
    else snprintf(buf, len, "table %s, the default (no table for device %s)", name, dev);
  }
}

void kite__explain_table(const struct kite_gpu_table *t, enum kite_table_how how, char *buf, size_t len)
{
  char note[320];
  const size_t used = strlen(buf);
  kite__table_note(t, how, note, sizeof note);
  if (used + 1 < len) snprintf(buf + used, len - used, " [%s]", note);
}

/* Better of two fitting variants: lower rank, then the tighter N range. */
static int kite_better(const struct kite_variant *a, const struct kite_variant *b)
{
  if (a->rank != b->rank) return a->rank < b->rank;
  return a->n_max < b->n_max;
}

int kite__row_fits(const struct kite_variant *v, const void *ctx)
{
  const struct kite_row_fit *f = ctx;
  return v->dtype == f->dtype && f->n >= v->n_min && f->n <= v->n_max && v->align > 0 &&
         f->align % v->align == 0;
}

const struct kite_variant *kite__row_heuristic(const struct kite_variant *tab, int32_t ntab, const char *op,
                                               kite_dtype dtype, int64_t n, int32_t align)
{
  const struct kite_row_fit fit = { dtype, n, align };
  const struct kite_variant *best = NULL;
  for (int32_t i = 0; i < ntab; i++) {
    const struct kite_variant *v = &tab[i];
    if (!kite__row_fits(v, &fit) || strcmp(v->op, op) != 0) continue;
    if (!best || kite_better(v, best)) best = v;
  }
  return best;
}

float kite__log2(int64_t x)
{
  return x < 1 ? 0.f : (float)log2((double)x);
}

const struct kite_rule *kite__rule_pick(const struct kite_rule *rules, int32_t nrules,
                                        const struct kite_variant *tab, int32_t ntab, const char *op,
                                        kite_dtype dtype, kite_dtype dtype_out, int64_t M, int64_t N,
                                        int64_t K, kite_fits_fn fits, const void *ctx)
{
  const float lm = kite__log2(M), ln = kite__log2(N), lk = kite__log2(K);
  const struct kite_rule *best = NULL;
  float best_d = 0.f;
  for (int32_t i = 0; i < nrules; i++) {
    const struct kite_rule *r = &rules[i];
    if (r->dtype != dtype || r->dtype_out != dtype_out || r->variant < 0 || r->variant >= ntab) continue;
    float d = (ln - r->ln) * (ln - r->ln);
    if (r->k > 0) d += (lm - r->lm) * (lm - r->lm) + (lk - r->lk) * (lk - r->lk);
    if (best && d >= best_d) continue;
    if (strcmp(r->op, op) != 0 || !fits(&tab[r->variant], ctx)) continue;
    best = r;
    best_d = d;
  }
  return best;
}

const struct kite_row_span *kite__span_find(const struct kite_row_span *spans, int32_t nspans, const char *op,
                                            kite_dtype dtype, int64_t n)
{
  for (int32_t i = 0; i < nspans; i++) {
    const struct kite_row_span *s = &spans[i];
    if (s->dtype == dtype && n >= s->n_lo && n <= s->n_hi && s->op && strcmp(s->op, op) == 0) return s;
  }
  return NULL;
}

const struct kite_variant *kite__pick(const char *op, kite_dtype dtype, int64_t n, int32_t align,
                                      struct kite_row_why *why)
{
  const struct kite_row_fit fit = { dtype, n, align };
  struct kite_row_why w = { NULL, NULL, NULL, KITE_TABLE_DEVICE };
  const struct kite_gpu_table *t = w.table = kite__table(&w.how);
  int32_t lo, hi;
  kite__span_range(t, op, &lo, &hi);
  w.span = kite__span_find(t->spans + lo, hi - lo, op, dtype, n);
  if (w.span && (w.span->variant < 0 || w.span->variant >= kite_variants_len ||
                 !kite__row_fits(&kite_variants[w.span->variant], &fit)))
    w.span = NULL;   /* misaligned data: the rules decide among the variants that take it */
  if (!w.span) {
    kite__rule_range(t, op, &lo, &hi);
    w.rule = kite__rule_pick(t->rules + lo, hi - lo, kite_variants, kite_variants_len, op, dtype, dtype, 0, n, 0,
                             kite__row_fits, &fit);
  }
  if (why) *why = w;
  if (w.span) return &kite_variants[w.span->variant];
  if (w.rule) return &kite_variants[w.rule->variant];
  kite__op_range(op, &lo, &hi);
  return kite__row_heuristic(kite_variants + lo, hi - lo, op, dtype, n, align);
}

const struct kite_variant *kite__find(const char *name)
{
  for (int32_t i = 0; i < kite_variants_len; i++)
    if (strcmp(kite_variants[i].name, name) == 0) return &kite_variants[i];
  return NULL;
}

static kite_status kite_check_device(void)
{
  const struct kite_device *d;
  const cudaError_t e = kite__device(&d);
  if (e != cudaSuccess)
    return kite__fail(KITE_ERR_CUDA, "no usable CUDA device: %s", cudaGetErrorString(e));
  if (d->major != 9 || d->minor != 0)
    return kite__fail(KITE_ERR_UNSUPPORTED, "device %d (%s) is sm_%d%d, not sm_90 (kite is built for sm_90a)",
                      d->id, d->name, d->major, d->minor);
  return KITE_OK;
}

kite_status kite_run_variant(const char *name, const void *args, cudaStream_t stream)
{
  if (!name || !args) return kite__fail(KITE_ERR_INVALID_ARG, "name and args must not be NULL");
  const struct kite_variant *v = kite__find(name);
  if (!v) return kite__fail(KITE_ERR_NO_KERNEL, "no variant named '%s'", name);
  if (strcmp(v->op, "gemm") == 0) return kite__gemm_run_variant(v, args, stream);
  return kite__row_run_variant(v, args, stream);
}

kite_status kite__launch(const struct kite_variant *v, const void *args, cudaStream_t stream)
{
  kite_status s = kite_check_device();
  if (s != KITE_OK) return s;
  atomic_fetch_add(&kite_launches, 1);
  cudaError_t e = v->launch(args, stream);
  if (e != cudaSuccess)
    return kite__fail(KITE_ERR_CUDA, "%s: launch failed: %s", v->name, cudaGetErrorString(e));
  return KITE_OK;
}

uint64_t kite__launch_count(void)
{
  return atomic_load(&kite_launches);
}

int32_t kite_variant_count(void)
{
  return kite_variants_len;
}

kite_status kite_variant_get(int32_t i, kite_variant_info *info)
{
  if (!info) return kite__fail(KITE_ERR_INVALID_ARG, "info is NULL");
  if (i < 0 || i >= kite_variants_len)
    return kite__fail(KITE_ERR_INVALID_ARG, "variant index %d outside [0, %d)", (int)i,
                      (int)kite_variants_len);
  const struct kite_variant *v = &kite_variants[i];
  info->name = v->name;
  info->op = v->op;
  info->dtype = v->dtype;
  info->dtype_out = v->dtype_out;
  info->tile_m = v->tile_m;
  info->tile_n = v->tile_n;
  info->eff = v->eff;
  info->cost_k = v->cost_k;
  info->n_min = v->n_min;
  info->n_max = v->n_max;
  info->align = v->align;
  info->rank = v->rank;
  return KITE_OK;
}

kite_status kite_explain(const char *op, kite_dtype dtype, int64_t M, int64_t N, int64_t K,
                         char *buf, size_t len)
{
  if (!op || !buf || len == 0) return kite__fail(KITE_ERR_INVALID_ARG, "op and buf must be given");
  if (strcmp(op, "gemm") == 0) return kite__gemm_explain(dtype, M, N, K, buf, len);
  if (M < 0 || N < 0) return kite__fail(KITE_ERR_INVALID_ARG, "negative size");
  kite_status s = kite__check_row_dtype(dtype);
  if (s != KITE_OK) return s;
  if (M == 0 || N == 0) {
    snprintf(buf, len, "%s %s M=%lld N=%lld: nothing to do (empty problem), no launch", op,
             kite__dtype_name(dtype), (long long)M, (long long)N);
    return KITE_OK;
  }
  struct kite_row_why why;
  const struct kite_variant *v = kite__pick(op, dtype, N, KITE_MAX_ALIGN, &why);
  const struct kite_rule *r = why.rule;
  if (!v)
    return kite__fail(KITE_ERR_NO_KERNEL, "no %s variant for %s N=%lld", op,
                      kite__dtype_name(dtype), (long long)N);
  if (why.span)
    snprintf(buf, len,
             "%s %s M=%lld N=%lld: %s (measured model: of every variant's tuned times per padded element, "
             "interpolated in log2 N, the least for N in [%lld, %lld]; assumes 16-byte-aligned pointers and "
             "strides, else the tuned rules pick among the variants that take the data)",
             op, kite__dtype_name(dtype), (long long)M, (long long)N, v->name, (long long)why.span->n_lo,
             (long long)why.span->n_hi);
  else if (r)
    snprintf(buf, len,
             "%s %s M=%lld N=%lld: %s (tuned rule: nearest tuned N=%lld in log2, where it ran %.1f us at "
             "M=%lld, the fastest measured; assumes 16-byte-aligned pointers and strides, else the "
             "element-wise variant)",
             op, kite__dtype_name(dtype), (long long)M, (long long)N, v->name, (long long)r->n,
             (double)r->time_us, (long long)r->m);
  else
    snprintf(buf, len,
             "%s %s M=%lld N=%lld: %s (heuristic: lowest rank, then smallest n_max covering N=%lld; "
             "assumes 16-byte-aligned pointers and strides, else the element-wise variant)",
             op, kite__dtype_name(dtype), (long long)M, (long long)N, v->name, (long long)N);
  kite__explain_table(why.table, why.how, buf, len);
  return KITE_OK;
}
