/* test_runtime.c - kite's host side, no GPU needed: status codes and error
 * text, argument validation of the row ops (every invalid argument gives its
 * error and launches nothing), dispatch (which variant a problem gets),
 * kite_run_variant's range and alignment checks, kite_explain, kite_gemm's
 * checks and tile heuristic (on synthetic tables), the launch helpers'
 * refusals, the variant table, and the test helpers' bf16/f16 conversions.
 *
 * Pointers here are fake device addresses: validation is host-only and comes
 * before any CUDA call.  main() hides every GPU (CUDA_VISIBLE_DEVICES=-1)
 * before CUDA starts, so a valid call ends in KITE_ERR_CUDA on any machine
 * and never launches a kernel on a fake pointer. */
#define _POSIX_C_SOURCE 200809L
#include "kite_test.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <time.h>

#include "kite_internal.h"
#include "kite_launch.h"

/* ---- fake device addresses and the ops under test ------------------------------ */

#define FAKE(a) ((void *)(uintptr_t)(a))
#define FX FAKE(0x10000000)
#define FY FAKE(0x20000000)
#define FW FAKE(0x30000000)
#define FRSTD FAKE(0x40000000)
#define FTGT FAKE(0x50000000)
#define FLOSS FAKE(0x60000000)
#define FLSE FAKE(0x70000000)
#define FDY FAKE(0x80000000)
#define FDLOSS FAKE(0x90000000)

enum { OP_RMSNORM, OP_SOFTMAX, OP_CE, OP_SOFTMAX_BWD, OP_CE_BWD, OP_COUNT };
static const char *const op_names[OP_COUNT] = { "rmsnorm", "softmax", "cross_entropy", "softmax_bwd",
                                                "cross_entropy_bwd" };
static const kite_dtype row_dtypes[3] = { KITE_BF16, KITE_F16, KITE_F32 };

/* The longest row the row ops take (README: any N from 1 to 2^30); longer
   ones up to 2^31-1 give KITE_ERR_NO_KERNEL, 2^31 and up KITE_ERR_UNSUPPORTED. */
#define ROW_N_MAX ((int64_t)1 << 30)

static char *cpy(const void *p, int64_t bytes) { return (char *)p + bytes; }

/* A valid problem for op: 4 rows of 1000, strides 1024, every optional output given. */
static kite_row_args valid_args(int op)
{
  kite_row_args a;
  memset(&a, 0, sizeof a);
  a.M = 4;
  a.N = 1000;
  a.x = FX;
  a.ldx = 1024;
  if (op != OP_CE) {
    a.y = FY;
    a.ldy = 1024;
  }
  if (op == OP_RMSNORM) {
    a.w = FW;
    a.eps = 1e-5f;
    a.rstd = FRSTD;
  }
  if (op == OP_CE) {
    a.target = FTGT;
    a.ignore_index = -100;
    a.loss = FLOSS;
    a.lse = FLSE;
  }
  if (op == OP_SOFTMAX_BWD) {   /* x: the forward's y; y: dx */
    a.dy = FDY;
    a.lddy = 1024;
  }
  if (op == OP_CE_BWD) {   /* y: dx */
    a.target = FTGT;
    a.ignore_index = -100;
    a.lse = FLSE;
    a.dloss = FDLOSS;
  }
  return a;
}

/* The public entry point of op. */
static kite_status call_entry(int op, kite_dtype dt, const kite_row_args *a)
{
  switch (op) {
  case OP_RMSNORM:
    return kite_rmsnorm_fwd(dt, a->M, a->N, a->x, a->ldx, a->w, a->eps, a->y, a->ldy, a->rstd, 0);
  case OP_SOFTMAX:
    return kite_softmax_fwd(dt, a->M, a->N, a->x, a->ldx, a->y, a->ldy, 0);
  case OP_SOFTMAX_BWD:
    return kite_softmax_bwd(dt, a->M, a->N, a->x, a->ldx, a->dy, a->lddy, a->y, a->ldy, 0);
  case OP_CE_BWD:
    return kite_cross_entropy_bwd(dt, a->M, a->N, a->x, a->ldx, a->target, a->ignore_index, a->lse, a->dloss,
                                  a->y, a->ldy, 0);
  default:
    return kite_cross_entropy_fwd(dt, a->M, a->N, a->x, a->ldx, a->target, a->ignore_index, a->loss,
                                  a->lse, 0);
  }
}

static int has_tag(const char *name, const char *tag)
{
  size_t n = strlen(tag);
  for (const char *p = strstr(name, tag); p; p = strstr(p + 1, tag))
    if (p > name && p[-1] == '_' && (p[n] == '_' || p[n] == '\0')) return 1;
  return 0;
}

/* The op's element-wise streaming variant of dtype: any N up to ROW_N_MAX, any
   element-aligned layout.  The committed space has one per op and dtype. */
static const struct kite_variant *any_layout_variant(const char *op, kite_dtype dt)
{
  for (int32_t i = 0; i < kite_variants_len; i++) {
    const struct kite_variant *v = &kite_variants[i];
    if (strcmp(v->op, op) == 0 && v->dtype == dt && v->n_min == 1 && v->n_max >= ROW_N_MAX &&
        v->align == kt_dtype_size(dt))
      return v;
  }
  ck_abort_msg("no element-aligned variant for %s %s up to N=2^30", op, kt_dtype_name(dt));
  return NULL;
}

/* A valid call: it gets past validation, so without a GPU it must stop at
   the device check (KITE_ERR_CUDA, or UNSUPPORTED for a non-sm_90 device),
   with nothing launched. */
static void expect_valid_no_gpu(kite_status s, const char *what)
{
  ck_assert_msg(s != KITE_OK,
                "%s: KITE_OK with fake pointers - a GPU is visible to test_runtime "
                "(CUDA_VISIBLE_DEVICES=-1 should hide it)", what);
  ck_assert_msg(s == KITE_ERR_CUDA || s == KITE_ERR_UNSUPPORTED,
                "%s: a valid call without a GPU gave %s (%s), want KITE_ERR_CUDA", what,
                kite_status_str(s), kite_last_error());
  ck_assert_msg(kite_last_error()[0] != '\0', "%s: %s with an empty kite_last_error()", what,
                kite_status_str(s));
}

/* ---- status codes and error text ------------------------------------------------- */

START_TEST(status_str_names_every_code)
{
  ck_assert_str_eq(kite_status_str(KITE_OK), "KITE_OK");
  ck_assert_str_eq(kite_status_str(KITE_ERR_INVALID_ARG), "KITE_ERR_INVALID_ARG");
  ck_assert_str_eq(kite_status_str(KITE_ERR_UNSUPPORTED), "KITE_ERR_UNSUPPORTED");
  ck_assert_str_eq(kite_status_str(KITE_ERR_CUDA), "KITE_ERR_CUDA");
  ck_assert_str_eq(kite_status_str(KITE_ERR_NO_KERNEL), "KITE_ERR_NO_KERNEL");
  ck_assert_str_eq(kite_status_str(KITE_ERR_INTERNAL), "KITE_ERR_INTERNAL");
  const char *bad = kite_status_str((kite_status)99);
  ck_assert_ptr_nonnull(bad);
  ck_assert_msg(strstr(bad, "KITE_") == bad && strcmp(bad, "KITE_OK") != 0,
                "an unknown status gives \"%s\"", bad);
  ck_assert_ptr_nonnull(kite_status_str((kite_status)-1));
}
END_TEST

static void *last_error_in_thread(void *arg)
{
  char *out = arg;
  snprintf(out, 256, "%s", kite_last_error());
  return NULL;
}

START_TEST(last_error_is_set_and_per_thread)
{
  char other[256] = "unset";
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, last_error_in_thread, other), 0);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_msg(other[0] == '\0', "a new thread's kite_last_error() is \"%s\", want \"\"", other);

  KT_KITE_EXPECT(kite_softmax_fwd(KITE_BF16, 2, 8, NULL, 8, FY, 8, 0), KITE_ERR_INVALID_ARG);
  char first[512];
  snprintf(first, sizeof first, "%s", kite_last_error());
  ck_assert_msg(first[0] != '\0', "kite_last_error() empty after a failed call");
  ck_assert_msg(strstr(first, "x") != NULL, "NULL x reported as \"%s\"", first);

  KT_KITE_EXPECT(kite_softmax_fwd(KITE_BF16, -1, 8, FX, 8, FY, 8, 0), KITE_ERR_INVALID_ARG);
  ck_assert_msg(strcmp(first, kite_last_error()) != 0,
                "two different failures gave the same text \"%s\"", first);

  /* another thread's failures do not touch this thread's text */
  snprintf(first, sizeof first, "%s", kite_last_error());
  ck_assert_int_eq(pthread_create(&th, NULL, last_error_in_thread, other), 0);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_str_eq(other, "");
  ck_assert_str_eq(kite_last_error(), first);

  KT_KITE_EXPECT(kite_variant_get(-1, NULL), KITE_ERR_INVALID_ARG);
  ck_assert_msg(kite_last_error()[0] != '\0', "kite_variant_get failure left no text");
  KT_KITE_EXPECT(kite_gemm(KITE_BF16, KITE_F32, -1, 1, 1, 1.f, FX, 1, FW, 1, 0.f, FY, 1, 0),
                 KITE_ERR_INVALID_ARG);
  ck_assert_msg(kite_last_error()[0] != '\0', "kite_gemm failure left no text");
}
END_TEST

/* ---- row-op validation --------------------------------------------------------------- */

enum { ANY = 31, RMS = 1 << OP_RMSNORM, SMX = 1 << OP_SOFTMAX, CE = 1 << OP_CE, BWD = 1 << OP_SOFTMAX_BWD,
       CEB = 1 << OP_CE_BWD, YOPS = RMS | SMX | BWD | CEB };

/* Mutation k of a valid problem: returns its description and sets *want, or
   NULL when k does not apply to this op/dtype/path; NULL with *done set past
   the last one.  *entry_only: the dtype is changed, so kite_run_variant (which
   takes the variant's dtype) cannot express it. */
static const char *mutate(int k, int op, kite_dtype *dt, kite_row_args *a, kite_status *want,
                          int *entry_only, int *done)
{
  const int es = kt_dtype_size(*dt);
  const int bit = 1 << op;
  *want = KITE_ERR_INVALID_ARG;
  *entry_only = 0;
  *done = 0;
#define CASE(n, ops, desc, ...) \
  case n:                        \
    if (!((ops) & bit)) return NULL; \
    __VA_ARGS__;                 \
    return desc;
  switch (k) {
  CASE(0, ANY, "x NULL", a->x = NULL)
  CASE(1, YOPS, "y NULL", a->y = NULL)
  CASE(2, RMS, "w NULL", a->w = NULL)
  CASE(3, CE, "target NULL", a->target = NULL)
  CASE(4, CE, "loss NULL", a->loss = NULL)
  CASE(5, ANY, "M = -1", a->M = -1)
  CASE(6, ANY, "N = -1", a->N = -1)
  CASE(7, ANY, "M = -1 with N = 0", a->M = -1; a->N = 0)
  CASE(8, ANY, "N = -1 with M = 0", a->N = -1; a->M = 0)
  CASE(9, ANY, "ldx = N - 1", a->ldx = a->N - 1)
  CASE(10, ANY, "ldx = -1024", a->ldx = -1024)
  CASE(11, YOPS, "ldy = N - 1", a->ldy = a->N - 1)
  CASE(12, YOPS, "ldy = 0", a->ldy = 0)
  CASE(13, ANY, "x one byte past its element alignment", a->x = cpy(a->x, 1))
  CASE(14, YOPS, "y one byte past its element alignment", a->y = cpy(a->y, 1))
  CASE(15, RMS, "w one byte past its element alignment", a->w = cpy(a->w, 1))
  CASE(16, es == 4 ? ANY : 0, "f32 x 2 bytes off", a->x = cpy(a->x, 2))
  CASE(17, es == 4 ? YOPS : 0, "f32 y 2 bytes off", a->y = cpy(a->y, 2))
  CASE(18, es == 4 ? RMS : 0, "f32 w 2 bytes off", a->w = cpy(a->w, 2))
  CASE(19, RMS, "rstd 2 bytes off", a->rstd = (float *)cpy(a->rstd, 2))
  CASE(20, RMS, "rstd 1 byte off", a->rstd = (float *)cpy(a->rstd, 1))
  CASE(21, CE, "loss 2 bytes off", a->loss = (float *)cpy(a->loss, 2))
  CASE(22, CE, "lse 2 bytes off", a->lse = (float *)cpy(a->lse, 2))
  CASE(23, CE, "target 4 bytes off", a->target = (const int64_t *)cpy(a->target, 4))
  CASE(24, CE, "target 1 byte off", a->target = (const int64_t *)cpy(a->target, 1))
  CASE(25, ANY, "dtype 99", *dt = (kite_dtype)99; *entry_only = 1)
  CASE(26, ANY, "dtype -1", *dt = (kite_dtype)-1; *entry_only = 1)
  CASE(27, ANY, "dtype KITE_E4M3", *dt = KITE_E4M3; *entry_only = 1; *want = KITE_ERR_UNSUPPORTED)
  CASE(28, ANY, "N = 2^31 (above INT32_MAX)",
       a->N = (int64_t)INT32_MAX + 1; a->ldx = a->N; a->ldy = a->y ? a->N : 0;
       *want = KITE_ERR_UNSUPPORTED)
  CASE(29, ANY, "N = INT64_MAX",
       a->N = INT64_MAX; a->ldx = a->N; a->ldy = a->y ? a->N : 0; *want = KITE_ERR_UNSUPPORTED)
  CASE(30, RMS, "eps NaN", a->eps = NAN)
  CASE(31, RMS, "eps negative", a->eps = -1e-6f)
  CASE(32, RMS, "eps +inf", a->eps = INFINITY)
  CASE(33, RMS, "eps -inf", a->eps = -INFINITY)
  CASE(34, YOPS, "y one element into x", a->y = cpy(a->x, es); a->ldy = a->ldx)
  CASE(35, YOPS, "y == x but ldy != ldx", a->y = cpy(a->x, 0); a->ldy = a->ldx + 16)
  CASE(36, YOPS, "y's last element on x's first",
       a->ldy = a->ldx; a->y = cpy(a->x, -((a->M - 1) * a->ldy + a->N - 1) * es))
  CASE(37, YOPS, "y's first element on x's last", a->y = cpy(a->x, ((a->M - 1) * a->ldx + a->N - 1) * es))
  CASE(38, YOPS, "y inside x's row padding and next row",
       a->y = cpy(a->x, (a->N + 8) * es); a->ldy = a->ldx)
  CASE(39, ANY, "M * ldx overflows int64 bytes", a->M = INT64_MAX / 2)
  CASE(40, ANY, "M = 2^40 rows of stride 2^30", a->M = (int64_t)1 << 40; a->ldx = (int64_t)1 << 30)
  CASE(41, ANY, "ldx = INT64_MAX with 2 rows", a->M = 2; a->ldx = INT64_MAX)
  CASE(42, YOPS, "M * ldy overflows", a->ldy = INT64_MAX / 2)
  CASE(43, ANY, "M = INT64_MAX", a->M = INT64_MAX)
  CASE(44, BWD, "dy NULL", a->dy = NULL)
  CASE(45, BWD, "lddy = N - 1", a->lddy = a->N - 1)
  CASE(46, BWD, "dy one byte past its element alignment", a->dy = cpy(a->dy, 1))
  CASE(47, es == 4 ? BWD : 0, "f32 dy 2 bytes off", a->dy = cpy(a->dy, 2))
  CASE(48, BWD, "dx one element into dy", a->y = cpy(a->dy, es); a->ldy = a->lddy)
  CASE(49, BWD, "dx == dy but lddx != lddy", a->y = cpy(a->dy, 0); a->ldy = a->lddy + 16)
  CASE(50, BWD, "M * lddy overflows", a->lddy = INT64_MAX / 2)
  CASE(51, CEB, "target NULL", a->target = NULL)
  CASE(52, CEB, "lse NULL", a->lse = NULL)
  CASE(53, CEB, "lse 2 bytes off", a->lse = (float *)cpy(a->lse, 2))
  CASE(54, CEB, "dloss 2 bytes off", a->dloss = (const float *)cpy(a->dloss, 2))
  CASE(55, CEB, "target 4 bytes off", a->target = (const int64_t *)cpy(a->target, 4))
  default:
    *done = 1;
    return NULL;
  }
#undef CASE
}

/* Every invalid argument of op gives its error through both the entry point
   and kite_run_variant, launches nothing, and says why. */
START_TEST(row_op_invalid_arguments)
{
  const int op = _i / 3;
  const kite_dtype base_dt = row_dtypes[_i % 3];
  const struct kite_variant *v = any_layout_variant(op_names[op], base_dt);
  int tried = 0;
  for (int k = 0;; k++) {
    for (int path = 0; path < 2; path++) {
      kite_row_args a = valid_args(op);
      kite_dtype dt = base_dt;
      kite_status want;
      int entry_only, done;
      const char *desc = mutate(k, op, &dt, &a, &want, &entry_only, &done);
      if (done) goto out;
      if (!desc || (path == 1 && entry_only)) continue;
      kite__fail(KITE_OK, "%s", "");   /* clear the text so a stale one cannot pass */
      const uint64_t before = kite__launch_count();
      const kite_status s = path == 0 ? call_entry(op, dt, &a) : kite_run_variant(v->name, &a, 0);
      ck_assert_msg(s == want, "%s %s, %s, via %s: got %s (%s), want %s", op_names[op],
                    kt_dtype_name(base_dt), desc, path == 0 ? "entry point" : v->name,
                    kite_status_str(s), kite_last_error(), kite_status_str(want));
      ck_assert_msg(kite_last_error()[0] != '\0', "%s %s, %s: no kite_last_error() text",
                    op_names[op], kt_dtype_name(base_dt), desc);
      ck_assert_msg(kite__launch_count() == before, "%s %s, %s: launched a kernel", op_names[op],
                    kt_dtype_name(base_dt), desc);
      tried++;
    }
  }
out:
  ck_assert_int_gt(tried, 20);
}
END_TEST

/* The unmutated problem, and the layouts that are valid although unusual. */
START_TEST(row_op_valid_arguments_reach_the_device_check)
{
  const int op = _i / 3;
  const kite_dtype dt = row_dtypes[_i % 3];
  const int es = kt_dtype_size(dt);
  const struct kite_variant *v = any_layout_variant(op_names[op], dt);
  const uint64_t before = kite__launch_count();
  char what[160];
  for (int k = 0; k < 9; k++) {
    kite_row_args a = valid_args(op);
    const char *desc = "baseline";
    switch (k) {
    case 1: if (op == OP_RMSNORM) { a.rstd = NULL; desc = "rstd NULL"; } break;
    case 2:
      if (op == OP_CE) { a.lse = NULL; desc = "lse NULL"; }
      if (op == OP_CE_BWD) { a.dloss = NULL; desc = "dloss NULL"; }
      break;
    case 3: if (op != OP_CE) { a.y = cpy(a.x, 0); a.ldy = a.ldx; desc = "y == x, ldy == ldx"; } break;
    case 4: /* y right after x's last element */
      if (op != OP_CE) { a.y = cpy(a.x, ((a.M - 1) * a.ldx + a.N) * es); desc = "y just after x"; }
      break;
    case 5: /* y's last element right before x */
      if (op != OP_CE) { a.y = cpy(a.x, -((a.M - 1) * a.ldy + a.N) * es); desc = "y just before x"; }
      break;
    case 6: /* the longest row; y placed after x's 2^30 elements */
      a.M = 1; a.N = ROW_N_MAX; a.ldx = a.N;
      if (a.y) { a.ldy = a.N; a.y = cpy(a.x, a.N * es); }
      if (a.dy) { a.lddy = a.N; a.dy = cpy(a.y, a.N * es); }
      desc = "N = 2^30";
      break;
    case 7: a.ldx = a.N; a.ldy = a.y ? a.N + 1 : 0; desc = "ldx == N, odd ldy"; break;
    case 8: if (op == OP_RMSNORM) { a.eps = 0.f; desc = "eps = 0"; } break;
    }
    snprintf(what, sizeof what, "%s %s %s via entry", op_names[op], kt_dtype_name(dt), desc);
    expect_valid_no_gpu(call_entry(op, dt, &a), what);
    snprintf(what, sizeof what, "%s %s %s via %s", op_names[op], kt_dtype_name(dt), desc, v->name);
    expect_valid_no_gpu(kite_run_variant(v->name, &a, 0), what);
  }
  /* longer rows: no variant (NO_KERNEL), or outside the variant's range */
  static const int64_t longer[] = { ROW_N_MAX + 1, INT32_MAX };
  for (int k = 0; k < 2; k++) {
    kite_row_args a = valid_args(op);
    a.M = 1;
    a.N = a.ldx = longer[k];
    if (a.y) { a.ldy = a.N; a.y = cpy(a.x, a.N * es); }
    if (a.dy) { a.lddy = a.N; a.dy = cpy(a.y, a.N * es); }
    KT_KITE_EXPECT(call_entry(op, dt, &a), KITE_ERR_NO_KERNEL);
    KT_KITE_EXPECT(kite_run_variant(v->name, &a, 0), KITE_ERR_UNSUPPORTED);
  }
  ck_assert_msg(kite__launch_count() == before, "a call without a GPU counted a launch");
}
END_TEST

/* M == 0 or N == 0: nothing to do, whatever the pointers and strides. */
START_TEST(row_op_empty_problems_launch_nothing)
{
  const int op = _i / 3;
  const kite_dtype dt = row_dtypes[_i % 3];
  const struct kite_variant *v = any_layout_variant(op_names[op], dt);
  const uint64_t before = kite__launch_count();
  for (int k = 0; k < 4; k++) {
    kite_row_args a;
    memset(&a, 0, sizeof a);   /* every pointer NULL, every stride 0 */
    a.eps = NAN;
    if (k == 0) a.N = 100;                  /* M == 0 */
    if (k == 1) a.M = 100;                  /* N == 0 */
    if (k == 2) { a.M = 0; a.N = (int64_t)1 << 40; }  /* N beyond 2^31 but no rows */
    if (k == 3) { a = valid_args(op); a.M = 0; a.x = cpy(a.x, 1); a.ldx = 0; }
    kite__fail(KITE_OK, "%s", "");
    kite_status s = call_entry(op, dt, &a);
    ck_assert_msg(s == KITE_OK, "%s %s empty problem %d via entry: %s (%s)", op_names[op],
                  kt_dtype_name(dt), k, kite_status_str(s), kite_last_error());
    s = kite_run_variant(v->name, &a, 0);
    ck_assert_msg(s == KITE_OK, "%s %s empty problem %d via %s: %s (%s)", op_names[op],
                  kt_dtype_name(dt), k, v->name, kite_status_str(s), kite_last_error());
  }
  /* an unknown dtype is an error even for an empty problem */
  kite_row_args a;
  memset(&a, 0, sizeof a);
  KT_KITE_EXPECT(call_entry(op, (kite_dtype)99, &a), KITE_ERR_INVALID_ARG);
  ck_assert_msg(kite__launch_count() == before, "an empty problem launched a kernel");
}
END_TEST

/* ---- the variant table -------------------------------------------------------------- */

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

START_TEST(variant_table_rows_are_sane)
{
  const int32_t n = kite_variant_count();
  ck_assert_int_eq(n, kite_variants_len);
  ck_assert_int_gt(n, 0);
  int per[OP_COUNT][3] = { { 0 } };
  for (int32_t i = 0; i < n; i++) {
    kite_variant_info info;
    KT_KITE_OK(kite_variant_get(i, &info));
    const struct kite_variant *v = &kite_variants[i];
    ck_assert_ptr_nonnull(info.name);
    ck_assert_ptr_nonnull(info.op);
    ck_assert_str_eq(info.name, v->name);
    ck_assert_str_eq(info.op, v->op);
    ck_assert_int_eq(info.dtype, v->dtype);
    ck_assert_int_eq(info.n_min, v->n_min);
    ck_assert_int_eq(info.n_max, v->n_max);
    ck_assert_int_eq(info.align, v->align);
    ck_assert_int_eq(info.rank, v->rank);
    ck_assert_int_eq(info.dtype_out, v->dtype_out);
    ck_assert_int_eq(info.tile_m, v->tile_m);
    ck_assert_int_eq(info.tile_n, v->tile_n);
    if (strcmp(v->op, "gemm") == 0)
      ck_assert_msg(v->tile_m > 0 && v->tile_n > 0 && kt_dtype_size(v->dtype_out) > 0,
                    "%s: tile %dx%d, dtype_out %d", v->name, (int)v->tile_m, (int)v->tile_n, (int)v->dtype_out);
    ck_assert_msg(v->launch != NULL, "%s has no launcher", v->name);
    size_t ol = strlen(v->op);
    ck_assert_msg(ol > 0 && strncmp(v->name, v->op, ol) == 0 && v->name[ol] == '_',
                  "%s does not start with its op \"%s_\"", v->name, v->op);
    const size_t good = strspn(v->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    ck_assert_msg(v->name[good] == '\0', "%s: '%c' is not [A-Za-z0-9_]", v->name, v->name[good]);
    ck_assert_msg(kt_dtype_size(v->dtype) > 0, "%s: dtype %d", v->name, (int)v->dtype);
    ck_assert_msg(1 <= v->n_min && v->n_min <= v->n_max && v->n_max <= INT32_MAX,
                  "%s: N range [%lld, %lld]", v->name, (long long)v->n_min, (long long)v->n_max);
    ck_assert_msg(is_pow2(v->align) && v->align <= 16 && v->align >= kt_dtype_size(v->dtype),
                  "%s: align %d", v->name, (int)v->align);
    ck_assert_msg(v->rank >= 0, "%s: rank %d", v->name, (int)v->rank);
    /* kite__find returns a name's first row: another row here is an earlier twin */
    const struct kite_variant *found = kite__find(v->name);
    ck_assert_msg(found == v, "%s appears twice (rows %d and %d) or is not found", v->name,
                  found ? (int)(found - kite_variants) : -1, (int)i);
    for (int op = 0; op < OP_COUNT; op++) {
      if (strcmp(v->op, op_names[op]) != 0) continue;
      char tag[16];
      snprintf(tag, sizeof tag, "%s", kt_dtype_name(v->dtype));
      ck_assert_msg(has_tag(v->name, tag), "%s does not name its dtype %s", v->name, tag);
      ck_assert_msg(v->dtype != KITE_E4M3, "%s: row ops take no e4m3", v->name);
      for (int d = 0; d < 3; d++)
        if (row_dtypes[d] == v->dtype) per[op][d]++;
    }
  }
  for (int op = 0; op < OP_COUNT; op++)
    for (int d = 0; d < 3; d++)
      ck_assert_msg(per[op][d] > 0, "no %s %s variant generated", op_names[op], kt_dtype_name(row_dtypes[d]));
  ck_assert_ptr_null(kite__find("no_such_variant"));
  ck_assert_ptr_null(kite__find(""));
}
END_TEST

START_TEST(variant_get_bounds)
{
  kite_variant_info info;
  memset(&info, 0x5a, sizeof info);
  const kite_variant_info untouched = info;
  KT_KITE_EXPECT(kite_variant_get(-1, &info), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_variant_get(kite_variant_count(), &info), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_variant_get(INT32_MAX, &info), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_variant_get(INT32_MIN, &info), KITE_ERR_INVALID_ARG);
  ck_assert_msg(memcmp(&info, &untouched, sizeof info) == 0, "a failed kite_variant_get wrote *info");
  KT_KITE_EXPECT(kite_variant_get(0, NULL), KITE_ERR_INVALID_ARG);
  KT_KITE_OK(kite_variant_get(0, &info));
  KT_KITE_OK(kite_variant_get(kite_variant_count() - 1, &info));
}
END_TEST

/* Every N from 1 to ROW_N_MAX has a variant, for any element-aligned layout
   and for 16-byte-aligned ones. */
START_TEST(variant_ranges_cover_every_n)
{
  for (int op = 0; op < OP_COUNT; op++)
    for (int d = 0; d < 3; d++) {
      const kite_dtype dt = row_dtypes[d];
      const int32_t aligns[2] = { (int32_t)kt_dtype_size(dt), 16 };
      for (int k = 0; k < 2; k++) {
        /* walk [1, ROW_N_MAX], each step jumping past the farthest-reaching fit */
        int64_t n = 1;
        while (n <= ROW_N_MAX) {
          int64_t reach = 0;
          for (int32_t i = 0; i < kite_variants_len; i++) {
            const struct kite_variant *v = &kite_variants[i];
            if (strcmp(v->op, op_names[op]) == 0 && v->dtype == dt && aligns[k] % v->align == 0 &&
                v->n_min <= n && n <= v->n_max && v->n_max > reach)
              reach = v->n_max;
          }
          ck_assert_msg(reach > 0, "%s %s, %d-byte alignment: no variant takes N=%lld", op_names[op],
                        kt_dtype_name(dt), (int)aligns[k], (long long)n);
          n = reach + 1;
        }
      }
    }
}
END_TEST

/* ---- dispatch ---------------------------------------------------------------------- */

/* (rank, n_max) order: 1 when a is the better fit. */
static int better(const struct kite_variant *a, const struct kite_variant *b)
{
  return a->rank != b->rank ? a->rank < b->rank : a->n_max < b->n_max;
}

static int fits(const struct kite_variant *v, const char *op, kite_dtype dt, int64_t n, int32_t align)
{
  return strcmp(v->op, op) == 0 && v->dtype == dt && v->n_min <= n && n <= v->n_max &&
         align % v->align == 0;
}

/* The variant the documented rule chooses, found by scanning the table: it
   fits, and no fitting variant has a lower rank, or the same rank and a
   smaller n_max.  Ties (equal rank and n_max) would make it ambiguous; the
   first one in the table is returned and *ties counts the others. */
static const struct kite_variant *expected_pick(const char *op, kite_dtype dt, int64_t n, int32_t align,
                                                int *ties)
{
  const struct kite_variant *best = NULL;
  *ties = 0;
  for (int32_t i = 0; i < kite_variants_len; i++) {
    const struct kite_variant *v = &kite_variants[i];
    if (!fits(v, op, dt, n, align)) continue;
    if (!best || better(v, best)) {
      best = v;
      *ties = 0;
    } else if (!better(best, v)) {
      (*ties)++;
    }
  }
  return best;
}

/* The one variant of op/dtype whose name appears as a word in text. */
static const struct kite_variant *named_in(const char *text, const char *op, kite_dtype dt)
{
  const struct kite_variant *found = NULL;
  for (int32_t i = 0; i < kite_variants_len; i++) {
    const struct kite_variant *v = &kite_variants[i];
    if (strcmp(v->op, op) != 0 || v->dtype != dt) continue;
    const size_t len = strlen(v->name);
    for (const char *p = strstr(text, v->name); p; p = strstr(p + 1, v->name)) {
      const char before = p == text ? ' ' : p[-1], after = p[len];
      const int word = !(before == '_' || (before >= '0' && before <= '9') || (before >= 'a' && before <= 'z') ||
                         (before >= 'A' && before <= 'Z')) &&
                       !(after == '_' || (after >= '0' && after <= '9') || (after >= 'a' && after <= 'z') ||
                         (after >= 'A' && after <= 'Z'));
      if (!word) continue;
      ck_assert_msg(found == NULL || found == v, "\"%s\" names both %s and %s", text, found->name, v->name);
      found = v;
    }
  }
  return found;
}

/* The sizes at which dispatch changes: every variant's n_max and n_max + 1. */
static int dispatch_sizes(const char *op, kite_dtype dt, int64_t *ns, int cap)
{
  static const int64_t fixed[] = { 1, 2, 7, 256, 257, 1000, 1024, 1025, 4096, 16384, 32768, 32769,
                                   65537, 100000, 262144, 1 << 24, ROW_N_MAX - 1, ROW_N_MAX,
                                   ROW_N_MAX + 1, INT32_MAX };
  int k = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) ns[k++] = fixed[i];
  for (int32_t i = 0; i < kite_variants_len && k + 2 <= cap; i++) {
    const struct kite_variant *v = &kite_variants[i];
    if (strcmp(v->op, op) != 0 || v->dtype != dt) continue;
    ns[k++] = v->n_max;
    if (v->n_max < INT32_MAX) ns[k++] = v->n_max + 1;
    if (v->n_min > 1) ns[k++] = v->n_min - 1;
  }
  return k;
}

/* kite_explain names the best fit for 16-byte-aligned data, and kite__pick
   agrees with the rule for every alignment. */
START_TEST(dispatch_picks_lowest_rank_then_tightest_range)
{
  const int op = _i / 3;
  const kite_dtype dt = row_dtypes[_i % 3];
  int64_t ns[512];
  const int count = dispatch_sizes(op_names[op], dt, ns, 512);
  char buf[1024];
  for (int k = 0; k < count; k++) {
    const int64_t n = ns[k];
    int ties;
    const struct kite_variant *want = expected_pick(op_names[op], dt, n, 16, &ties);
    ck_assert_msg(want != NULL || n > ROW_N_MAX, "%s %s N=%lld: no fitting variant at all", op_names[op],
                  kt_dtype_name(dt), (long long)n);
    if (!want) {
      KT_KITE_EXPECT(kite_explain(op_names[op], dt, 7, n, 0, buf, sizeof buf), KITE_ERR_NO_KERNEL);
      ck_assert_ptr_null(kite__pick(op_names[op], dt, n, 16, NULL));
      continue;
    }
    KT_KITE_OK(kite_explain(op_names[op], dt, 7, n, 0, buf, sizeof buf));
    const struct kite_variant *got = named_in(buf, op_names[op], dt);
    ck_assert_msg(got != NULL, "explain for %s %s N=%lld names no variant: \"%s\"", op_names[op],
                  kt_dtype_name(dt), (long long)n, buf);
    ck_assert_msg(fits(got, op_names[op], dt, n, 16), "explain for N=%lld picked %s [%lld, %lld] align %d",
                  (long long)n, got->name, (long long)got->n_min, (long long)got->n_max, (int)got->align);
    kite_variant_info info;
    KT_KITE_OK(kite_variant_get((int32_t)(got - kite_variants), &info));
    ck_assert_msg(info.n_min <= n && n <= info.n_max && info.dtype == dt && strcmp(info.op, op_names[op]) == 0,
                  "kite_variant_get(%s) does not fit N=%lld", got->name, (long long)n);
    struct kite_row_why why;
    ck_assert_msg(kite__pick(op_names[op], dt, n, 16, &why) == got, "kite__pick and kite_explain disagree at N=%lld",
                  (long long)n);
    if (why.span) {   /* the measured spans decide (bench/tuned): the heuristic's ranking does not apply */
      ck_assert(got == &kite_variants[why.span->variant] && why.span->n_lo <= n && n <= why.span->n_hi);
      KT_ASSERT_HAS(buf, "measured model");
      continue;
    }
    if (why.rule) {   /* a tuned rule decides (bench/tuned) */
      ck_assert_ptr_eq(got, &kite_variants[why.rule->variant]);
      KT_ASSERT_HAS(buf, "tuned rule");
      continue;
    }
    ck_assert_msg(!better(want, got), "%s %s N=%lld: explain picked %s (rank %d, n_max %lld) but %s "
                  "(rank %d, n_max %lld) fits better", op_names[op], kt_dtype_name(dt), (long long)n,
                  got->name, (int)got->rank, (long long)got->n_max, want->name, (int)want->rank,
                  (long long)want->n_max);
    if (ties == 0) ck_assert_ptr_eq(got, want);
    /* every alignment kite__align_of can report */
    for (int32_t align = 1; align <= 16; align *= 2) {
      struct kite_row_why wa;
      const struct kite_variant *p = kite__pick(op_names[op], dt, n, align, &wa);
      const struct kite_variant *w = expected_pick(op_names[op], dt, n, align, &ties);
      if (wa.span || wa.rule) {
        ck_assert(p == &kite_variants[wa.span ? wa.span->variant : wa.rule->variant] &&
                  fits(p, op_names[op], dt, n, align));
        continue;
      }
      if (!w) {
        ck_assert_msg(p == NULL, "kite__pick(%s, N=%lld, align %d) = %s, but it needs align %d", op_names[op],
                      (long long)n, (int)align, p->name, (int)p->align);
        continue;
      }
      ck_assert_msg(p != NULL, "kite__pick(%s %s, N=%lld, align %d) found nothing; %s fits", op_names[op],
                    kt_dtype_name(dt), (long long)n, (int)align, w->name);
      ck_assert_msg(fits(p, op_names[op], dt, n, align) && !better(w, p),
                    "kite__pick(%s %s, N=%lld, align %d) = %s, want %s", op_names[op], kt_dtype_name(dt),
                    (long long)n, (int)align, p->name, w->name);
    }
  }
  /* outside every range */
  ck_assert_ptr_null(kite__pick(op_names[op], dt, 0, 16, NULL));
  ck_assert_ptr_null(kite__pick(op_names[op], dt, (int64_t)INT32_MAX + 1, 16, NULL));
  ck_assert_ptr_null(kite__pick("no_such_op", dt, 100, 16, NULL));
}
END_TEST

/* The heuristic's pick for 16-byte-aligned data (what the facts below are about). */
static const struct kite_variant *heuristic(const char *op, kite_dtype dt, int64_t n)
{
  const struct kite_variant *v = kite__row_heuristic(kite_variants, kite_variants_len, op, dt, n, 16);
  ck_assert_msg(v != NULL, "no %s %s variant for N=%lld", op, kt_dtype_name(dt), (long long)n);
  return v;
}

/* Facts that hold for the committed parameter space (templates/lib/rowops.lua). */
START_TEST(dispatch_facts_of_the_committed_space)
{
  for (int op = 0; op < OP_COUNT; op++) {
    const char *o = op_names[op];
    for (int d = 0; d < 3; d++) {
      const kite_dtype dt = row_dtypes[d];
      const int es = kt_dtype_size(dt);
      /* short rows stay resident in registers, one warp per row; long ones
         stream with 16-byte accesses (rmsnorm's: resident over a cluster's
         CTAs up to 256 K 16-bit elements) */
      ck_assert_msg(has_tag(heuristic(o, dt, 1)->name, "reg_t32"), "%s %s N=1", o, kt_dtype_name(dt));
      const int64_t warp_n = op == OP_SOFTMAX_BWD ? 256 : 512;   /* two rows held: 2 accesses a thread */
      ck_assert_msg(has_tag(heuristic(o, dt, warp_n)->name, "reg_t32"), "%s %s N=%lld: %s", o, kt_dtype_name(dt),
                    (long long)warp_n, heuristic(o, dt, warp_n)->name);
      const struct kite_variant *big = heuristic(o, dt, 100000);
      const int cluster = op == OP_RMSNORM;   /* rmsnorm's cluster rows rank before streaming */
      ck_assert_msg(cluster ? has_tag(big->name, "reg") && strstr(big->name, "_x") != NULL
                            : has_tag(big->name, "loop") && has_tag(big->name, "v16"),
                    "%s %s N=100000: %s", o, kt_dtype_name(dt), big->name);
      const struct kite_variant *top = heuristic(o, dt, ROW_N_MAX);
      ck_assert_msg(has_tag(top->name, "loop") && has_tag(top->name, "v16"), "%s %s N=2^30: %s", o,
                    kt_dtype_name(dt), top->name);
      /* element-aligned data gets the element-wise variant, at every size */
      static const int64_t ns[] = { 1, 7, 1000, 1024, 100000, ROW_N_MAX };
      for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        const struct kite_variant *v = kite__pick(o, dt, ns[k], es, NULL);
        ck_assert_msg(v != NULL && has_tag(v->name, "e1"), "%s %s N=%lld, %d-byte aligned: %s", o,
                      kt_dtype_name(dt), (long long)ns[k], es, v ? v->name : "nothing");
        if (es == 2) {
          const struct kite_variant *v8 = kite__pick(o, dt, ns[k], 8, NULL);
          ck_assert_msg(v8 != NULL && has_tag(v8->name, "e1"), "%s %s N=%lld, 8-byte aligned: %s", o,
                        kt_dtype_name(dt), (long long)ns[k], v8 ? v8->name : "nothing");
        }
      }
    }
  }
  /* The measured ranking (rowops.lua, session 5): rows through 16384 bf16 elements stay in
     registers, one warp per row through 1024, then 4 accesses per thread (cross-entropy from
     8192 on: bulk copies, 2 stages); longer rows stream by plain loads, rmsnorm's stay
     resident over a cluster (session 8) up to 256 K. */
  ck_assert(has_tag(heuristic("softmax", KITE_BF16, 1024)->name, "reg_t32"));
  ck_assert(has_tag(heuristic("softmax", KITE_BF16, 8192)->name, "reg_t256_r1_n4"));
  ck_assert(has_tag(heuristic("cross_entropy", KITE_BF16, 1000)->name, "reg_t32_r8_n4"));
  ck_assert(has_tag(heuristic("cross_entropy", KITE_BF16, 4096)->name, "reg_t128_r2_n4"));
  ck_assert(has_tag(heuristic("softmax", KITE_BF16, 16384)->name, "reg_t512"));
  ck_assert(has_tag(heuristic("softmax", KITE_BF16, 16385)->name, "loop"));
  ck_assert(has_tag(heuristic("cross_entropy", KITE_BF16, 8192)->name, "bulk_t256_r1_n4"));
  ck_assert(has_tag(heuristic("cross_entropy", KITE_BF16, 16384)->name, "bulk_t512_r1_n4"));
  ck_assert(has_tag(heuristic("rmsnorm", KITE_BF16, 16384)->name, "reg_t512"));
  ck_assert(has_tag(heuristic("rmsnorm", KITE_BF16, 16385)->name, "x2"));
  ck_assert(has_tag(heuristic("rmsnorm", KITE_BF16, 262144)->name, "x16"));
  ck_assert(has_tag(heuristic("rmsnorm", KITE_BF16, 262145)->name, "loop"));
}
END_TEST

/* Rank 6 (rowops.lua) holds the row variants measured slower or not yet
   measured (session 16's bulk cluster rows, the backward ops' bulk rows,
   split rows): only a tuned rule or span may send a problem to them, never
   the heuristic, at any N or alignment, for any row op in the table. */
#define ROW_RANK_TUNED_ONLY 6
START_TEST(heuristic_never_picks_tuned_only_variants)
{
  int picked = 0, pairs = 0;
  const struct kite_variant *seen[64];   /* one variant of each (op, dtype) walked */
  for (int32_t i = 0; i < kite_variants_len; i++) {
    const struct kite_variant *op = &kite_variants[i];
    int known = op->tile_m != 0;   /* gemm: not a row op */
    for (int q = 0; q < pairs && !known; q++) known = strcmp(seen[q]->op, op->op) == 0 && seen[q]->dtype == op->dtype;
    if (known) continue;
    ck_assert_int_lt(pairs, 64);
    seen[pairs++] = op;
    const int32_t aligns[2] = { (int32_t)kt_dtype_size(op->dtype), 16 };
    for (int k = 0; k < 2; k++)
      for (int64_t p = 1; p <= ROW_N_MAX; p *= 2) {
        const int64_t ns[3] = { p - 1, p, p + p / 2 + 1 };
        for (int j = 0; j < 3; j++) {
          if (ns[j] < 1 || ns[j] > ROW_N_MAX) continue;
          const struct kite_variant *v = kite__row_heuristic(kite_variants, kite_variants_len, op->op, op->dtype,
                                                             ns[j], aligns[k]);
          ck_assert_msg(v != NULL, "%s %s N=%lld align %d: nothing", op->op, kt_dtype_name(op->dtype),
                        (long long)ns[j], (int)aligns[k]);
          ck_assert_msg(v->rank < ROW_RANK_TUNED_ONLY, "%s %s N=%lld align %d: %s (rank %d)", op->op,
                        kt_dtype_name(op->dtype), (long long)ns[j], (int)aligns[k], v->name, (int)v->rank);
          picked++;
        }
      }
  }
  ck_assert_int_ge(pairs, 27);   /* nine row ops, three dtypes each */
  ck_assert_int_gt(picked, 1000);
}
END_TEST

/* Three-access rows (rowops.lua three_ok, sessions 37-39): a register row of
   64-512 threads, one row block a CTA, or a bulk row of 256 or 512 threads
   and two stages (ops of one staged operand), or a cluster row of 256 or 512
   threads a CTA (register rows, and bulk rows of 16-bit data), whose chunk
   is 1.5 * 2^k elements, so that such a row fills its CTA (its cluster);
   only ops whose register rows may hold three accesses get them (not
   rmsnorm_res: nv_max 2; not cross_entropy_bwd's cluster rows: it has none),
   and the tune alone picks them (rank 6). */
START_TEST(three_access_rows_fill_a_chunk_of_one_and_a_half_powers)
{
  static const char *with[] = { "rmsnorm", "softmax", "cross_entropy", "layernorm", "cross_entropy_bwd",
                                "layernorm_bwd", "softmax_bwd", "rmsnorm_bwd" };
  static const int bulk_of[] = { 0, 6, 6, 0, 0, 0, 0, 0 };   /* two shapes, three dtypes */
  static const int cluster_of[] = { 40, 40, 40, 40, 0, 40, 40, 40 };   /* 2 x 4 register, 16-bit: 2 x 4 bulk */
  int reg[8] = { 0 }, bulk[8] = { 0 }, cluster[8] = { 0 };
  for (int32_t i = 0; i < kite_variants_len; i++) {
    const struct kite_variant *v = &kite_variants[i];
    if (v->tile_m != 0 || strstr(v->name, "_n3_") == NULL) continue;
    const int is_reg = has_tag(v->name, "reg") && has_tag(v->name, "p1");
    const int is_bulk = has_tag(v->name, "bulk") && has_tag(v->name, "p2");
    const char *x = strstr(v->name, "_x");
    const int64_t ctas = x ? strtoll(x + 2, NULL, 10) : 1;
    ck_assert_msg(is_reg || is_bulk, "%s: three accesses outside a register or bulk row", v->name);
    ck_assert_msg(ctas == 1 || ctas == 2 || ctas == 4 || ctas == 8 || ctas == 16, "%s: cluster", v->name);
    ck_assert_msg(v->rank == ROW_RANK_TUNED_ONLY, "%s: rank %d", v->name, (int)v->rank);
    const int64_t per_thread = 3 * (16 / kt_dtype_size(v->dtype));
    ck_assert_msg(v->n_max % (per_thread * ctas) == 0, "%s: n_max %lld", v->name, (long long)v->n_max);
    const int64_t threads = v->n_max / per_thread / ctas;   /* a power of two from 64 (bulk, cluster: 256) to 512 */
    ck_assert_msg(threads >= (is_bulk || ctas > 1 ? 256 : 64) && threads <= 512 && (threads & (threads - 1)) == 0,
                  "%s: %lld threads", v->name, (long long)threads);
    ck_assert_msg(ctas == 1 ? v->n_min == 1 : v->n_min == v->n_max / 2 + 1, "%s: n_min %lld", v->name,
                  (long long)v->n_min);
    int known = 0;
    for (size_t k = 0; k < sizeof with / sizeof with[0]; k++)
      if (strcmp(v->op, with[k]) == 0) {
        known = 1;
        if (ctas > 1) cluster[k]++;
        else reg[k] += is_reg, bulk[k] += is_bulk;
      }
    ck_assert_msg(known, "%s: its op holds two accesses at most", v->name);
  }
  for (size_t k = 0; k < sizeof with / sizeof with[0]; k++) {
    ck_assert_msg(reg[k] == 18, "%s: %d three-access register rows, 18 expected (6 shapes, 3 dtypes)", with[k],
                  reg[k]);
    ck_assert_msg(bulk[k] == bulk_of[k], "%s: %d three-access bulk rows, %d expected", with[k], bulk[k],
                  bulk_of[k]);
    ck_assert_msg(cluster[k] == cluster_of[k], "%s: %d three-access cluster rows, %d expected", with[k],
                  cluster[k], cluster_of[k]);
  }
}
END_TEST

/* What the entry point sees of a layout: an odd bf16 stride leaves 2-byte
   alignment, and that must still find a variant (the element-wise one). */
START_TEST(odd_stride_dispatches_to_the_element_wise_variant)
{
  for (int d = 0; d < 3; d++) {
    const kite_dtype dt = row_dtypes[d];
    const int es = kt_dtype_size(dt);
    const void *ptrs[3] = { FX, FY, FW };
    const int64_t strides[2] = { 1001 * es, 1024 * es };
    const int32_t align = kite__align_of(ptrs, 3, strides, 2);
    ck_assert_int_eq(align, es);
    for (int op = 0; op < OP_COUNT; op++) {
      const struct kite_variant *v = kite__pick(op_names[op], dt, 1000, align, NULL);
      ck_assert_msg(v && has_tag(v->name, "e1"), "%s %s, odd ldx: %s", op_names[op], kt_dtype_name(dt),
                    v ? v->name : "nothing");
      /* the entry point takes it (and stops at the device check) */
      kite_row_args a = valid_args(op);
      a.ldx = 1001;
      expect_valid_no_gpu(call_entry(op, dt, &a), "odd ldx via entry point");
    }
  }
}
END_TEST

START_TEST(align_of_is_the_lowest_common_power_of_two)
{
  const void *p16[3] = { FAKE(0x1000), FAKE(0x2010), NULL };
  const int64_t s16[2] = { 2048, 0 };
  ck_assert_int_eq(kite__align_of(p16, 3, s16, 2), 16);
  ck_assert_int_eq(kite__align_of(p16, 3, NULL, 0), 16);      /* capped at 16 */
  const void *p2[2] = { FAKE(0x1000), FAKE(0x1002) };
  ck_assert_int_eq(kite__align_of(p2, 2, s16, 1), 2);
  const void *p1[1] = { FAKE(0x1001) };
  ck_assert_int_eq(kite__align_of(p1, 1, s16, 1), 1);
  const int64_t s4[2] = { 2048, 12 };
  ck_assert_int_eq(kite__align_of(p16, 2, s4, 2), 4);
  const int64_t s8[1] = { 8 };
  ck_assert_int_eq(kite__align_of(p16, 2, s8, 1), 8);
  const void *pn[2] = { NULL, NULL };
  ck_assert_int_eq(kite__align_of(pn, 2, NULL, 0), 16);       /* NULLs say nothing */
}
END_TEST

/* ---- kite_run_variant ----------------------------------------------------------------- */

START_TEST(run_variant_arguments)
{
  const kite_row_args a = valid_args(OP_SOFTMAX);
  KT_KITE_EXPECT(kite_run_variant(NULL, &a, 0), KITE_ERR_INVALID_ARG);
  const struct kite_variant *v = any_layout_variant("softmax", KITE_BF16);
  KT_KITE_EXPECT(kite_run_variant(v->name, NULL, 0), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_run_variant("no_such_variant", &a, 0), KITE_ERR_NO_KERNEL);
  KT_KITE_EXPECT(kite_run_variant("", &a, 0), KITE_ERR_NO_KERNEL);
  KT_KITE_EXPECT(kite_run_variant("softmax", &a, 0), KITE_ERR_NO_KERNEL);
}
END_TEST

/* Every variant: a fitting problem passes its checks, N outside its range and
   data below its alignment give UNSUPPORTED, invalid arguments still give
   INVALID_ARG first, and nothing launches. */
START_TEST(run_variant_range_and_alignment)
{
  const uint64_t before = kite__launch_count();
  int v16_seen = 0;
  for (int32_t i = 0; i < kite_variants_len; i++) {
    const struct kite_variant *v = &kite_variants[i];
    int op = -1;
    for (int k = 0; k < OP_COUNT; k++)
      if (strcmp(v->op, op_names[k]) == 0) op = k;
    if (op < 0) continue;   /* an op this test does not know the arguments of */
    const int es = kt_dtype_size(v->dtype);
    char what[256];
    kite_row_args a = valid_args(op);
    a.N = v->n_max < 4096 ? v->n_max : 4096;
    if (a.N < v->n_min) a.N = v->n_min;
    a.ldx = a.ldy = (a.N + 15) / 16 * 16;
    if (!a.y) a.ldy = 0;
    if (a.dy) a.lddy = a.ldx;
    snprintf(what, sizeof what, "%s N=%lld", v->name, (long long)a.N);
    expect_valid_no_gpu(kite_run_variant(v->name, &a, 0), what);
    if (v->n_max < INT32_MAX) {
      kite_row_args b = a;
      b.M = 1;
      b.N = v->n_max + 1;
      b.ldx = b.ldy = (b.N + 15) / 16 * 16;
      if (b.y) b.y = cpy(b.x, b.ldx * es);   /* clear of x however long the row */
      else b.ldy = 0;
      if (b.dy) {
        b.lddy = b.ldx;
        b.dy = cpy(b.y, b.ldy * es);
      }
      KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
      b.x = NULL;  /* invalid and out of range: the invalid argument is reported */
      KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_INVALID_ARG);
      b.x = a.x;
      b.M = 0;     /* empty: nothing to refuse */
      KT_KITE_OK(kite_run_variant(v->name, &b, 0));
    }
    if (v->n_min > 1) {
      kite_row_args b = a;
      b.N = v->n_min - 1;
      KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
    }
    if (v->align > es) {
      v16_seen++;
      kite_row_args b = a;
      b.ldx = a.ldx + 1;                 /* odd stride: element-aligned only */
      KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
      b = a;
      b.x = cpy(a.x, es);                /* base pointer one element off */
      KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
      if (op == OP_RMSNORM) {
        b = a;
        b.w = cpy(a.w, es);
        KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
      }
      if (op != OP_CE) {
        b = a;
        b.y = cpy(a.y, es);
        KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
        b = a;
        b.ldy = a.ldy + 1;
        KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
      }
      if (op == OP_SOFTMAX_BWD) {
        b = a;
        b.dy = cpy(a.dy, es);
        KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
        b = a;
        b.lddy = a.lddy + 1;
        KT_KITE_EXPECT(kite_run_variant(v->name, &b, 0), KITE_ERR_UNSUPPORTED);
      }
      /* the same layout is fine for the element-wise variant */
      b = a;
      b.ldx = a.ldx + 1;
      b.x = cpy(a.x, es);
      snprintf(what, sizeof what, "odd layout on the element-wise variant of %s", v->name);
      expect_valid_no_gpu(kite_run_variant(any_layout_variant(v->op, v->dtype)->name, &b, 0), what);
      /* and also 16-byte aligned outputs that are not row data (rstd, loss) need nothing */
      b = a;
      if (b.rstd) b.rstd = (float *)cpy(b.rstd, 4);
      if (b.loss) b.loss = (float *)cpy(b.loss, 4);
      if (b.lse) b.lse = (float *)cpy(b.lse, 4);
      snprintf(what, sizeof what, "%s with 4-byte-aligned rstd/loss/lse", v->name);
      expect_valid_no_gpu(kite_run_variant(v->name, &b, 0), what);
    }
  }
  ck_assert_int_gt(v16_seen, 0);
  ck_assert_msg(kite__launch_count() == before, "kite_run_variant launched without a GPU");
}
END_TEST

/* ---- kite_explain ------------------------------------------------------------------ */

START_TEST(explain_arguments)
{
  char buf[256];
  KT_KITE_EXPECT(kite_explain(NULL, KITE_BF16, 4, 1024, 0, buf, sizeof buf), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("rmsnorm", KITE_BF16, 4, 1024, 0, NULL, sizeof buf), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("rmsnorm", KITE_BF16, 4, 1024, 0, buf, 0), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("rmsnorm", KITE_BF16, -1, 1024, 0, buf, sizeof buf), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("rmsnorm", KITE_BF16, 4, -1, 0, buf, sizeof buf), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("rmsnorm", (kite_dtype)99, 4, 1024, 0, buf, sizeof buf), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("rmsnorm", KITE_E4M3, 4, 1024, 0, buf, sizeof buf), KITE_ERR_UNSUPPORTED);
  KT_KITE_EXPECT(kite_explain("no_such_op", KITE_BF16, 4, 1024, 0, buf, sizeof buf), KITE_ERR_NO_KERNEL);
  KT_KITE_EXPECT(kite_explain("softmax", KITE_BF16, 4, ROW_N_MAX + 1, 0, buf, sizeof buf), KITE_ERR_NO_KERNEL);
  kite_status s = kite_explain("softmax", KITE_BF16, 4, (int64_t)INT32_MAX + 1, 0, buf, sizeof buf);
  ck_assert_msg(s == KITE_ERR_NO_KERNEL || s == KITE_ERR_UNSUPPORTED, "explain N=2^31: %s", kite_status_str(s));

  /* a short buffer: truncated, terminated, still OK */
  memset(buf, 'Z', sizeof buf);
  KT_KITE_OK(kite_explain("softmax", KITE_F16, 4, 1024, 0, buf, 10));
  ck_assert_int_eq(buf[9], '\0');
  ck_assert_int_eq((int)strlen(buf), 9);
  ck_assert_int_eq(buf[10], 'Z');
  memset(buf, 'Z', sizeof buf);
  KT_KITE_OK(kite_explain("softmax", KITE_F16, 4, 1024, 0, buf, 1));
  ck_assert_int_eq(buf[0], '\0');
  ck_assert_int_eq(buf[1], 'Z');
  /* M and K do not matter to the row ops, and explaining launches nothing */
  const uint64_t before = kite__launch_count();
  char b1[512], b2[512];
  KT_KITE_OK(kite_explain("cross_entropy", KITE_F32, 1, 5000, 0, b1, sizeof b1));
  KT_KITE_OK(kite_explain("cross_entropy", KITE_F32, 100000, 5000, 77, b2, sizeof b2));
  ck_assert_ptr_eq(named_in(b1, "cross_entropy", KITE_F32), named_in(b2, "cross_entropy", KITE_F32));
  ck_assert_msg(kite__launch_count() == before, "kite_explain launched");
}
END_TEST

/* ---- kite_gemm -------------------------------------------------------------------- */

/* A launcher for synthetic table rows: validation and the device check come
   first, so without a GPU it must never run. */
static cudaError_t stub_launch(const void *args, cudaStream_t stream)
{
  (void)args;
  (void)stream;
  ck_abort_msg("a synthetic variant was launched");
  return cudaErrorUnknown;
}

/* A gemm variant with the heuristic's efficiency (per mille) and cost_k */
#define SVE(nm, ab_, c_, al, rk, tm, tn, ef, ck)                                                    \
  { .name = nm, .op = "gemm", .dtype = ab_, .dtype_out = c_, .n_min = 1, .n_max = INT32_MAX,      \
    .align = al, .rank = rk, .tile_m = tm, .tile_n = tn, .eff = ef, .cost_k = ck, .launch = stub_launch }
/* ... at the templates' defaults (eff 1000, cost_k 0) */
#define SV(nm, ab_, c_, al, rk, tm, tn) SVE(nm, ab_, c_, al, rk, tm, tn, 1000, 0)

typedef struct gemm_case {
  kite_dtype ab, c;
  kite_gemm_args a;
} gemm_case;

/* A valid product: bf16 x bf16 -> f32, 64 x 96 x 80, strides 128, 128, 96. */
static gemm_case gemm_valid(void)
{
  gemm_case g;
  memset(&g, 0, sizeof g);
  g.ab = KITE_BF16;
  g.c = KITE_F32;
  g.a = (kite_gemm_args){ .M = 64, .N = 96, .K = 80, .alpha = 1.f, .beta = 0.f,
                          .A = FX, .lda = 128, .B = FW, .ldb = 128, .C = FY, .ldc = 96 };
  return g;
}

static kite_status gemm_entry(const gemm_case *g)
{
  const kite_gemm_args *a = &g->a;
  return kite_gemm(g->ab, g->c, a->M, a->N, a->K, a->alpha, a->A, a->lda, a->B, a->ldb, a->beta, a->C,
                   a->ldc, 0);
}

/* A real gemm variant of ab -> c that takes element-aligned data, or NULL
   (none is generated yet while the gemm templates are placeholders). */
static const struct kite_variant *any_layout_gemm(kite_dtype ab, kite_dtype c)
{
  for (int32_t i = 0; i < kite_variants_len; i++) {
    const struct kite_variant *v = &kite_variants[i];
    if (strcmp(v->op, "gemm") == 0 && v->dtype == ab && v->dtype_out == c && v->align <= kt_dtype_size(ab))
      return v;
  }
  return NULL;
}

/* Mutation k of gemm_valid(), as mutate() does for the row ops; *dtype_case:
   it changes a dtype, which a named real variant cannot express. */
static const char *gemm_mutate(int k, gemm_case *g, kite_status *want, int *dtype_case, int *done)
{
  kite_gemm_args *a = &g->a;
  const int esab = kt_dtype_size(g->ab), esc = kt_dtype_size(g->c);
  *want = KITE_ERR_INVALID_ARG;
  *dtype_case = *done = 0;
#define GCASE(n, desc, ...) \
  case n:                   \
    __VA_ARGS__;            \
    return desc;
  switch (k) {
  GCASE(0, "A NULL", a->A = NULL)
  GCASE(1, "B NULL", a->B = NULL)
  GCASE(2, "C NULL", a->C = NULL)
  GCASE(3, "M = -1", a->M = -1)
  GCASE(4, "N = -1", a->N = -1)
  GCASE(5, "K = -1", a->K = -1)
  GCASE(6, "M = -1 with N = 0", a->M = -1; a->N = 0)
  GCASE(7, "K = -1 with M = 0", a->K = -1; a->M = 0)
  GCASE(8, "lda = K - 1", a->lda = a->K - 1)
  GCASE(9, "ldb = K - 1", a->ldb = a->K - 1)
  GCASE(10, "ldc = N - 1", a->ldc = a->N - 1)
  GCASE(11, "lda = -128", a->lda = -128)
  GCASE(12, "ldc = 0", a->ldc = 0)
  GCASE(13, "A one byte off", a->A = cpy(a->A, 1))
  GCASE(14, "B one byte off", a->B = cpy(a->B, 1))
  GCASE(15, "C one byte off", a->C = cpy(a->C, 1))
  GCASE(16, "f32 C two bytes off", a->C = cpy(a->C, 2))
  GCASE(17, "C == A", a->C = cpy(a->A, 0); a->ldc = a->lda)
  GCASE(18, "C inside B", a->C = cpy(a->B, 64))
  GCASE(19, "C's last element on A's first", a->C = cpy(a->A, -((a->M - 1) * a->ldc + a->N - 1) * esc))
  GCASE(20, "C's first element on B's second-last",
        a->C = cpy(a->B, ((a->N - 1) * a->ldb + a->K - 2) * esab))
  GCASE(21, "C in A's row padding", a->C = cpy(a->A, a->K * esab))
  GCASE(22, "M = 2^31", a->M = (int64_t)INT32_MAX + 1; *want = KITE_ERR_UNSUPPORTED)
  GCASE(23, "N = 2^31", a->N = a->ldc = (int64_t)INT32_MAX + 1; *want = KITE_ERR_UNSUPPORTED)
  GCASE(24, "K = INT64_MAX", a->K = a->lda = a->ldb = INT64_MAX; *want = KITE_ERR_UNSUPPORTED)
  GCASE(25, "lda = INT64_MAX / 2: A overflows", a->lda = INT64_MAX / 2)
  GCASE(26, "ldc = INT64_MAX: C overflows", a->ldc = INT64_MAX)
  GCASE(27, "ab = 99", g->ab = (kite_dtype)99; *dtype_case = 1)
  GCASE(28, "c = -1", g->c = (kite_dtype)-1; *dtype_case = 1)
  GCASE(29, "ab = f32", g->ab = KITE_F32; *dtype_case = 1; *want = KITE_ERR_UNSUPPORTED)
  GCASE(30, "ab = e4m3", g->ab = KITE_E4M3; *dtype_case = 1; *want = KITE_ERR_UNSUPPORTED)
  GCASE(31, "c = e4m3", g->c = KITE_E4M3; *dtype_case = 1; *want = KITE_ERR_UNSUPPORTED)
  GCASE(32, "ab = f32 with M = 0", g->ab = KITE_F32; a->M = 0; *dtype_case = 1; *want = KITE_ERR_UNSUPPORTED)
  GCASE(33, "ab = 99 with K = 0", g->ab = (kite_dtype)99; a->K = 0; *dtype_case = 1)
  default:
    *done = 1;
    return NULL;
  }
#undef GCASE
}

/* Runs g by path: 0 kite_gemm, 1 a synthetic variant of g's dtypes through
   kite__gemm_run_variant, 2 a real variant by name (0 if there is none). */
static int gemm_by_path(int path, const gemm_case *g, int32_t align, kite_status *s)
{
  const struct kite_variant sv = SV("gemm_synthetic", g->ab, g->c, align, 0, 64, 64);
  const struct kite_variant *real = path == 2 ? any_layout_gemm(g->ab, g->c) : NULL;
  if (path == 0) *s = gemm_entry(g);
  else if (path == 1) *s = kite__gemm_run_variant(&sv, &g->a, 0);
  else if (real) *s = kite_run_variant(real->name, &g->a, 0);
  return path < 2 || real != NULL;
}

static const char *const gemm_paths[3] = { "kite_gemm", "synthetic variant", "named variant" };

/* Every invalid argument gives its status on every path, says why, and launches nothing. */
START_TEST(gemm_invalid_arguments)
{
  int tried = 0;
  for (int k = 0;; k++)
    for (int path = 0; path < 3; path++) {
      gemm_case g = gemm_valid();
      kite_status want, s = KITE_OK;
      int dtype_case, done;
      const char *desc = gemm_mutate(k, &g, &want, &dtype_case, &done);
      if (done) goto out;
      if (path == 2 && dtype_case) continue;
      kite__fail(KITE_OK, "%s", "");
      const uint64_t before = kite__launch_count();
      if (!gemm_by_path(path, &g, 2, &s)) continue;
      ck_assert_msg(s == want, "gemm %s via %s: got %s (%s), want %s", desc, gemm_paths[path],
                    kite_status_str(s), kite_last_error(), kite_status_str(want));
      ck_assert_msg(kite_last_error()[0] != '\0', "gemm %s via %s: no kite_last_error() text", desc,
                    gemm_paths[path]);
      ck_assert_msg(kite__launch_count() == before, "gemm %s via %s: launched", desc, gemm_paths[path]);
      tried++;
    }
out:
  ck_assert_int_gt(tried, 60);
}
END_TEST

/* Valid products (some unusual) pass every check: without a GPU kite_gemm
   ends in NO_KERNEL when no variant is generated for them, else at the
   device check, as the variant paths do. */
START_TEST(gemm_valid_arguments_reach_the_device_check)
{
  const uint64_t before = kite__launch_count();
  char what[200];
  for (int k = 0; k < 10; k++) {
    gemm_case g = gemm_valid();
    kite_gemm_args *a = &g.a;
    const char *desc = "baseline";
    switch (k) {
    case 1: a->B = a->A; a->ldb = a->lda; desc = "B == A"; break;
    case 2: a->B = cpy(a->A, 64); desc = "B overlaps A"; break;
    case 3: a->C = cpy(a->A, ((a->M - 1) * a->lda + a->K) * 2); desc = "C just after A"; break;
    case 4: a->C = cpy(a->A, -((a->M - 1) * a->ldc + a->N) * 4); desc = "C just before A"; break;
    case 5: a->lda = 81; a->ldb = 83; a->ldc = 97; desc = "odd strides"; break;
    case 6: a->M = a->N = a->K = a->lda = a->ldb = a->ldc = 1; desc = "1 x 1 x 1"; break;
    case 7: g.c = KITE_BF16; a->C = cpy(a->C, 2); desc = "bf16 C, 2-byte aligned"; break;
    case 8: g.ab = g.c = KITE_F16; a->alpha = NAN; desc = "f16, alpha NaN"; break;
    case 9: a->M = a->N = 1; a->K = a->lda = a->ldb = INT32_MAX; a->C = FAKE(0x7f0000000000); desc = "K = 2^31-1"; break;
    }
    const int32_t align = kite__align_of((const void *const[]){ a->A, a->B }, 2,
                                         (const int64_t[]){ a->lda * 2, a->ldb * 2 }, 2);
    for (int path = 0; path < 3; path++) {
      kite_status s;
      if (!gemm_by_path(path, &g, 2, &s)) continue;
      snprintf(what, sizeof what, "gemm %s via %s", desc, gemm_paths[path]);
      if (path == 0 && !kite__gemm_pick(kite_variants, kite_variants_len, g.ab, g.c, a->M, a->N, a->K, align, 1))
        KT_KITE_EXPECT(s, KITE_ERR_NO_KERNEL);
      else
        expect_valid_no_gpu(s, what);
    }
  }
  ck_assert_msg(kite__launch_count() == before, "a gemm without a GPU counted a launch");
}
END_TEST

/* A variant's alignment covers A, B and their strides, not C. */
START_TEST(gemm_variant_alignment)
{
  const uint64_t before = kite__launch_count();
  for (int k = 0; k < 9; k++) {
    gemm_case g = gemm_valid();
    kite_gemm_args *a = &g.a;
    kite_status want = KITE_ERR_UNSUPPORTED, s;
    const char *desc = "baseline";
    switch (k) {
    case 0: want = KITE_ERR_CUDA; break;
    case 1: a->lda = 129; desc = "odd lda"; break;
    case 2: a->ldb = 132; desc = "ldb * 2 bytes = 8 (mod 16)"; break;
    case 3: a->A = cpy(a->A, 2); desc = "A 2 bytes off"; break;
    case 4: a->B = cpy(a->B, 8); desc = "B 8 bytes off"; break;
    case 5: a->C = cpy(a->C, 4); a->ldc = 97; want = KITE_ERR_CUDA; desc = "C 4 bytes off, odd ldc"; break;
    case 6: a->A = NULL; a->lda = 129; want = KITE_ERR_INVALID_ARG; desc = "A NULL and odd lda"; break;
    case 7: a->lda = 129; a->M = 0; want = KITE_OK; desc = "odd lda, empty"; break;
    case 8: a->M = 1; a->lda = 129; desc = "odd lda, one row"; break;
    }
    gemm_by_path(1, &g, 16, &s);
    if (want == KITE_ERR_CUDA) expect_valid_no_gpu(s, desc);
    else ck_assert_msg(s == want, "align-16 synthetic, %s: %s (%s), want %s", desc, kite_status_str(s),
                       kite_last_error(), kite_status_str(want));
  }
  ck_assert_msg(kite__launch_count() == before, "launched");
}
END_TEST

/* M, N or K of 0: done, whatever the pointers and strides. */
START_TEST(gemm_empty_products_launch_nothing)
{
  const uint64_t before = kite__launch_count();
  for (int k = 0; k < 4; k++) {
    gemm_case g;
    memset(&g, 0, sizeof g);
    g.ab = KITE_F16;
    g.c = KITE_F32;
    g.a.M = k == 0 ? 0 : 7;
    g.a.N = k == 1 ? 0 : 9;
    g.a.K = k == 2 ? 0 : 11;
    if (k == 3) { g = gemm_valid(); g.a.N = 0; g.a.A = cpy(g.a.A, 1); g.a.lda = 0; }
    for (int path = 0; path < 3; path++) {
      kite_status s;
      if (!gemm_by_path(path, &g, 16, &s)) continue;
      ck_assert_msg(s == KITE_OK, "empty product %d via %s: %s (%s)", k, gemm_paths[path],
                    kite_status_str(s), kite_last_error());
    }
  }
  ck_assert_msg(kite__launch_count() == before, "an empty product launched");
}
END_TEST

/* ---- the gemm heuristic on synthetic tables --------------------------------------- */

static const struct kite_variant pick_tab[] = {
  /* the efficiencies and cost_k of templates/lib/gemm_tma.lua */
  SVE("gemm_t_128x256", KITE_BF16, KITE_BF16, 16, 0, 128, 256, 1000, 448),
  SVE("gemm_t_128x128", KITE_BF16, KITE_BF16, 16, 0, 128, 128, 965, 448),
  SVE("gemm_p_128x128", KITE_BF16, KITE_BF16, 16, 1, 128, 128, 945, 192),
  SVE("gemm_t_64x128", KITE_BF16, KITE_BF16, 16, 0, 64, 128, 645, 448),
  SVE("gemm_t_64x64", KITE_BF16, KITE_BF16, 16, 0, 64, 64, 395, 448),
  SVE("gemm_s_64x64", KITE_BF16, KITE_BF16, 2, 1, 64, 64, 120, 0),
  SVE("gemm_s_128x128", KITE_BF16, KITE_BF16, 2, 1, 128, 128, 200, 0),
  SVE("gemm_h_128x256", KITE_F16, KITE_F16, 16, 0, 128, 256, 1000, 448),
  SVE("gemm_c_128x256", KITE_BF16, KITE_F32, 16, 0, 128, 256, 1000, 448),
  SVE("gemm_e_128x192", KITE_BF16, KITE_BF16, 8, 0, 128, 192, 975, 448),
  { .name = "softmax_bf16_x", .op = "softmax", .dtype = KITE_BF16, .dtype_out = KITE_BF16, .n_min = 1,
    .n_max = INT32_MAX, .align = 2, .rank = 0, .tile_m = 0, .tile_n = 0, .launch = stub_launch },
};
#define PICK_N ((int32_t)(sizeof pick_tab / sizeof pick_tab[0]))

static const struct kite_variant *pick(kite_dtype ab, kite_dtype c, int64_t M, int64_t N, int32_t align, int sms)
{
  return kite__gemm_pick(pick_tab, PICK_N, ab, c, M, N, 512, align, sms);
}

#define PICKED(v, nm) \
  ck_assert_msg((v) != NULL && strcmp((v)->name, nm) == 0, "picked %s, want %s", (v) ? (v)->name : "NULL", nm)

START_TEST(gemm_pick_filters_dtype_and_alignment)
{
  PICKED(pick(KITE_F16, KITE_F16, 4096, 4096, 16, 132), "gemm_h_128x256");
  PICKED(pick(KITE_BF16, KITE_F32, 4096, 4096, 16, 132), "gemm_c_128x256");
  PICKED(pick(KITE_BF16, KITE_F32, 1, 1, 16, 132), "gemm_c_128x256");   /* the only one */
  ck_assert_ptr_null(pick(KITE_BF16, KITE_F16, 4096, 4096, 16, 132));
  ck_assert_ptr_null(pick(KITE_F16, KITE_F32, 4096, 4096, 16, 132));
  ck_assert_ptr_null(pick(KITE_F32, KITE_F32, 4096, 4096, 16, 132));
  ck_assert_ptr_null(pick(KITE_F16, KITE_F16, 4096, 4096, 8, 132));     /* below its alignment */
  ck_assert_ptr_null(pick(KITE_BF16, KITE_BF16, 64, 64, 1, 132));       /* nothing takes 1 byte */
  ck_assert_ptr_null(kite__gemm_pick(pick_tab, 0, KITE_BF16, KITE_BF16, 64, 64, 64, 16, 132));
  ck_assert_ptr_null(kite__gemm_pick(&pick_tab[PICK_N - 1], 1, KITE_BF16, KITE_BF16, 64, 64, 64, 16, 132));
  /* an odd lda leaves 2-byte alignment: only the align-2 variants */
  const int32_t odd = kite__align_of((const void *const[]){ FX, FW }, 2, (const int64_t[]){ 4097 * 2, 4096 * 2 }, 2);
  ck_assert_int_eq(odd, 2);
  kt_rng r = kt_rng_for("gemm_pick_align", 0);
  for (int k = 0; k < 2000; k++) {
    const int64_t M = kt_range(&r, 1, 20000), N = kt_range(&r, 1, 20000);
    const int sms = (int)kt_range(&r, 1, 200);
    const struct kite_variant *v = pick(KITE_BF16, KITE_BF16, M, N, odd, sms);
    ck_assert_msg(v && v->align <= 2, "M=%lld N=%lld sms=%d, align 2: %s", (long long)M, (long long)N, sms,
                  v ? v->name : "NULL");
    v = pick(KITE_BF16, KITE_BF16, M, N, 8, sms);
    ck_assert_msg(v && v->align <= 8, "align 8: %s", v ? v->name : "NULL");
    ck_assert_msg(strcmp(v->op, "gemm") == 0, "picked a %s variant", v->op);
  }
}
END_TEST

static const struct kite_variant *pickk(int64_t M, int64_t N, int64_t K, int32_t align, int sms)
{
  return kite__gemm_pick(pick_tab, PICK_N, KITE_BF16, KITE_BF16, M, N, K, align, sms);
}

START_TEST(gemm_pick_heuristic_choices)
{
  /* large square: many waves of any tile, so the most efficient tile */
  PICKED(pickk(8192, 8192, 8192, 16, 132), "gemm_t_128x256");
  /* long K: the epilogue is a small share, so cooperative 128x256 beats the
     ping-pong 128x128 that hides it (16 waves against 32) */
  PICKED(pickk(16384, 4096, 14336, 16, 132), "gemm_t_128x256");
  /* short K: the hidden epilogue wins (2 waves of ping-pong 128x128 against
     one of 128x256 or two of cooperative 128x128) */
  PICKED(pickk(2048, 2048, 2048, 16, 132), "gemm_p_128x128");
  PICKED(pickk(8192, 8192, 1024, 16, 132), "gemm_p_128x128");
  /* tiny M: one wave whatever the tile, so the smallest tile */
  PICKED(pickk(16, 4096, 4096, 16, 132), "gemm_t_64x64");
  PICKED(pickk(1, 1, 4096, 16, 132), "gemm_t_64x64");
  ck_assert_int_eq(pickk(16, 4096, 4096, 2, 132)->tile_m, 64);
  /* 1152 x 1152 on 132 SMs: 45 tiles of 128x256 or 81 of 128x128, both one
     wave; the smaller tile spreads over more SMs */
  PICKED(pickk(1152, 1152, 4096, 16, 132), "gemm_p_128x128");
  /* one SM: every tile runs one after another, so efficiency alone decides */
  PICKED(pickk(8192, 8192, 8192, 16, 1), "gemm_t_128x256");
  /* sms <= 0 is taken as 1 rather than crashing */
  PICKED(pickk(8192, 8192, 8192, 16, 0), "gemm_t_128x256");
  /* 2-byte-aligned data: the best of the align-2 variants */
  PICKED(pickk(8192, 8192, 8192, 2, 132), "gemm_s_128x128");
  /* 8-byte-aligned: 128x192 (21 waves at 0.975) beats 128x128 (32 at 0.965) */
  PICKED(pickk(8192, 8192, 8192, 8, 132), "gemm_e_128x192");
}
END_TEST

/* Ties go to the lower rank, then the smaller name, in any table order; and
   the choice is an argmin: dropping a variant that was not chosen, or
   reordering the table, never changes it. */
START_TEST(gemm_pick_is_deterministic)
{
  const struct kite_variant ties[] = {
    SV("gemm_b", KITE_BF16, KITE_BF16, 2, 1, 128, 128), SV("gemm_a", KITE_BF16, KITE_BF16, 2, 1, 128, 128),
    SV("gemm_c", KITE_BF16, KITE_BF16, 2, 0, 128, 128),
  };
  const struct kite_variant rev[] = { ties[2], ties[1], ties[0] };
  PICKED(kite__gemm_pick(ties, 3, KITE_BF16, KITE_BF16, 999, 999, 9, 16, 132), "gemm_c");
  PICKED(kite__gemm_pick(rev, 3, KITE_BF16, KITE_BF16, 999, 999, 9, 16, 132), "gemm_c");
  PICKED(kite__gemm_pick(ties, 2, KITE_BF16, KITE_BF16, 999, 999, 9, 16, 132), "gemm_a");
  PICKED(kite__gemm_pick(&rev[1], 2, KITE_BF16, KITE_BF16, 999, 999, 9, 16, 132), "gemm_a");

  kt_rng r = kt_rng_for("gemm_pick_argmin", 0);
  struct kite_variant sub[PICK_N];
  for (int k = 0; k < 500; k++) {
    const int64_t M = kt_range(&r, 1, 1 << 16), N = kt_range(&r, 1, 1 << 16);
    const int sms = (int)kt_range(&r, 1, 160);
    const int32_t align = (int32_t)1 << kt_range(&r, 1, 4);
    const struct kite_variant *full = pick(KITE_BF16, KITE_BF16, M, N, align, sms);
    ck_assert_ptr_nonnull(full);
    for (int32_t drop = 0; drop < PICK_N; drop++) {
      int32_t n = 0;
      for (int32_t i = PICK_N - 1; i >= 0; i--)   /* reversed, without drop */
        if (i != drop) sub[n++] = pick_tab[i];
      const struct kite_variant *v = kite__gemm_pick(sub, n, KITE_BF16, KITE_BF16, M, N, 512, align, sms);
      if (&pick_tab[drop] == full) continue;
      ck_assert_msg(v && strcmp(v->name, full->name) == 0, "M=%lld N=%lld sms=%d align %d: %s, without %s: %s",
                    (long long)M, (long long)N, sms, (int)align, full->name, pick_tab[drop].name,
                    v ? v->name : "NULL");
    }
  }
}
END_TEST

/* The alignment kite_explain assumes for gemm: dense 16-bit A and B (rows of
   2 K bytes) at 128-byte-aligned addresses. */
static int32_t dense_align(int64_t K)
{
  const uint64_t bits = 128 | (uint64_t)(2 * K);
  return (int32_t)(bits & (~bits + 1));
}

/* ---- kite_explain for gemm ------------------------------------------------------------ */

START_TEST(gemm_explain)
{
  char buf[512];
  const uint64_t before = kite__launch_count();
  KT_KITE_EXPECT(kite_explain("gemm", KITE_BF16, -1, 64, 64, buf, sizeof buf), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("gemm", KITE_BF16, 64, 64, -1, buf, sizeof buf), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("gemm", (kite_dtype)99, 64, 64, 64, buf, sizeof buf), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_explain("gemm", KITE_F32, 64, 64, 64, buf, sizeof buf), KITE_ERR_UNSUPPORTED);
  KT_KITE_EXPECT(kite_explain("gemm", KITE_BF16, (int64_t)1 << 31, 64, 64, buf, sizeof buf), KITE_ERR_UNSUPPORTED);
  KT_KITE_EXPECT(kite_explain("gemm", KITE_BF16, 64, 64, 64, NULL, 9), KITE_ERR_INVALID_ARG);
  KT_KITE_OK(kite_explain("gemm", KITE_BF16, 64, 0, 64, buf, sizeof buf));
  ck_assert_msg(strstr(buf, "nothing to do") != NULL, "empty gemm explained as \"%s\"", buf);
  static const int64_t shapes[][3] = { { 128, 128, 128 }, { 8192, 8192, 8192 }, { 16, 4096, 4096 }, { 1, 1, 1 },
                                       { 1216, 8488, 3480 } };   /* the last: ragged rows */
  static const kite_dtype dts[2] = { KITE_BF16, KITE_F16 };
  for (int d = 0; d < 2; d++)
    for (int k = 0; k < 5; k++) {
      const int64_t *sh = shapes[k];
      /* no device here: explain assumes 132 SMs, dense A and B at 128-byte-aligned addresses, C of A's dtype */
      const int32_t al = dense_align(sh[2]);
      const struct kite_variant *want = kite__gemm_pick(kite_variants, kite_variants_len, dts[d], dts[d],
                                                        sh[0], sh[1], sh[2], al, 132);
      const kite_status s = kite_explain("gemm", dts[d], sh[0], sh[1], sh[2], buf, sizeof buf);
      if (!want) {
        KT_KITE_EXPECT(s, KITE_ERR_NO_KERNEL);
        continue;
      }
      KT_KITE_OK(s);
      const struct kite_rule *r = kite__gemm_rule(dts[d], dts[d], sh[0], sh[1], sh[2], al);
      if (r) {   /* a tuned rule decides (bench/tuned) */
        ck_assert_msg(strstr(buf, kite_variants[r->variant].name) && strstr(buf, "tuned rule"),
                      "explain gemm: \"%s\", want the rule's %s", buf, kite_variants[r->variant].name);
        continue;
      }
      double us;
      const struct kite_gpu_table *t = kite__table(NULL);
      const struct kite_gemm_model *m = kite__gemm_model_pick(t->models, t->models_len,
                                                              kite_variants, kite_variants_len, dts[d], dts[d],
                                                              sh[0], sh[1], sh[2], al, 132, &us);
      if (m) {   /* else the measured models (bench/tuned/<gpu>.times.tsv) */
        ck_assert_msg(strstr(buf, kite_variants[m->variant].name) && strstr(buf, "measured model") &&
                      strstr(buf, "wave") && strstr(buf, "132 SMs"), "explain gemm: \"%s\", want the model's %s",
                      buf, kite_variants[m->variant].name);
        ck_assert_msg(!strstr(buf, "rows not whole 128-byte lines") == (al % 128 == 0), "explain gemm: \"%s\"",
                      buf);
        continue;
      }
      ck_assert_msg(strstr(buf, want->name) && strstr(buf, "wave") && strstr(buf, "tile") &&
                    strstr(buf, "132 SMs") && strstr(buf, "128-byte"), "explain gemm: \"%s\", want %s", buf,
                    want->name);
    }
  ck_assert_msg(kite__launch_count() == before, "kite_explain launched");
}
END_TEST

/* kite_gemm remembers its last choice per thread: a problem that differs in
   any one field of the key (dtype, M, N, K) still gets what kite_explain
   names for it (for dense operands: 16-, 8- and 2-byte rows here), and
   asking twice changes nothing. */
START_TEST(gemm_choice_memo)
{
  static const int64_t shapes[][3] = { { 1216, 8488, 3480 }, { 1217, 8488, 3480 }, { 1217, 8489, 3480 },
                                       { 1217, 8489, 3481 }, { 64, 64, 64 }, { 8192, 8192, 8192 } };
  char buf[512];
  for (int round = 0; round < 2; round++)
    for (int d = 0; d < 2; d++)
      for (int k = 0; k < 6; k++) {
        const kite_dtype dt = d ? KITE_F16 : KITE_BF16;
        const int64_t *sh = shapes[k];
        const kite_status s = kite_explain("gemm", dt, sh[0], sh[1], sh[2], buf, sizeof buf);
        const struct kite_variant *got = kite__gemm_choice(dt, dt, sh[0], sh[1], sh[2], dense_align(sh[2]), 132);
        ck_assert_ptr_eq(got, kite__gemm_choice(dt, dt, sh[0], sh[1], sh[2], dense_align(sh[2]), 132));
        if (s == KITE_ERR_NO_KERNEL) {
          ck_assert_ptr_null(got);
          continue;
        }
        KT_KITE_OK(s);
        ck_assert_msg(got && got == named_in(buf, "gemm", dt), "gemm %lldx%lldx%lld: chose %s, explain says \"%s\"",
                      (long long)sh[0], (long long)sh[1], (long long)sh[2], got ? got->name : "nothing", buf);
      }
}
END_TEST

/* ---- launch helpers without a driver ------------------------------------------------- */

/* Refusals come before the driver is asked; the map is left untouched. */
START_TEST(tmap_refuses_bad_arguments)
{
  _Alignas(64) unsigned char map[128], untouched[128];
  memset(map, 0xa5, sizeof map);
  memcpy(untouched, map, sizeof map);
  const void *base = FX;
  struct { const char *desc; kite_dtype dt; const void *base; int64_t rows, cols, ld; int32_t br, bc, swz; } bad[] = {
    { "base 2 bytes off", KITE_BF16, cpy(base, 2), 64, 64, 64, 64, 64, 128 },
    { "base 8 bytes off", KITE_BF16, cpy(base, 8), 64, 64, 64, 64, 64, 128 },
    { "base NULL", KITE_BF16, NULL, 64, 64, 64, 64, 64, 128 },
    { "stride 14 bytes", KITE_BF16, base, 64, 7, 7, 8, 8, 0 },
    { "stride 8 bytes (mod 16)", KITE_F32, base, 64, 64, 66, 64, 32, 128 },
    { "ld < cols", KITE_BF16, base, 64, 64, 56, 64, 64, 128 },
    { "stride 2^40 bytes", KITE_BF16, base, 2, 64, (int64_t)1 << 39, 64, 64, 128 },
    { "ld = INT64_MAX", KITE_F32, base, 2, 64, INT64_MAX, 64, 32, 128 },
    { "box rows 257", KITE_BF16, base, 1024, 1024, 1024, 257, 64, 128 },
    { "box rows 0", KITE_BF16, base, 1024, 1024, 1024, 0, 64, 128 },
    { "box cols 512", KITE_BF16, base, 1024, 1024, 1024, 64, 512, 0 },
    { "box cols -8", KITE_BF16, base, 1024, 1024, 1024, 64, -8, 0 },
    { "box row 8 bytes", KITE_BF16, base, 1024, 1024, 1024, 64, 4, 0 },
    { "box row 256 bytes, swizzle 128", KITE_BF16, base, 1024, 1024, 1024, 64, 128, 128 },
    { "box row 64 bytes, swizzle 32", KITE_F32, base, 1024, 1024, 1024, 64, 16, 32 },
    { "swizzle 16", KITE_BF16, base, 1024, 1024, 1024, 64, 8, 16 },
    { "swizzle -1", KITE_BF16, base, 1024, 1024, 1024, 64, 8, -1 },
    { "rows 0", KITE_BF16, base, 0, 64, 64, 64, 64, 128 },
    { "cols 0", KITE_BF16, base, 64, 0, 64, 64, 64, 128 },
    { "rows 2^32 + 1", KITE_BF16, base, ((int64_t)1 << 32) + 1, 64, 64, 64, 64, 128 },
    { "dtype 99", (kite_dtype)99, base, 64, 64, 64, 64, 64, 128 },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const cudaError_t e = kite__tmap_2d(map, bad[i].dt, bad[i].base, bad[i].rows, bad[i].cols, bad[i].ld,
                                        bad[i].br, bad[i].bc, bad[i].swz);
    ck_assert_msg(e == cudaErrorInvalidValue, "tmap %s: %s, want cudaErrorInvalidValue", bad[i].desc,
                  cudaGetErrorName(e));
    ck_assert_msg(memcmp(map, untouched, sizeof map) == 0, "tmap %s wrote the map", bad[i].desc);
  }
  ck_assert_int_eq(kite__tmap_2d(NULL, KITE_BF16, base, 64, 64, 64, 64, 64, 128), cudaErrorInvalidValue);
  /* valid requests get as far as the device, which is hidden here */
  const cudaError_t e = kite__tmap_2d(map, KITE_BF16, base, 1000, 999, 1024, 128, 64, 128);
  ck_assert_msg(e != cudaSuccess && e != cudaErrorInvalidValue, "a valid tmap without a GPU: %s",
                cudaGetErrorName(e));
  ck_assert_msg(memcmp(map, untouched, sizeof map) == 0, "a failed tmap wrote the map");
}
END_TEST

START_TEST(device_sms_without_a_device)
{
  int sms = -7;
  ck_assert_int_eq(kite__device_sms(NULL), cudaErrorInvalidValue);
  ck_assert_int_ne(kite__device_sms(&sms), cudaSuccess);
  ck_assert_int_eq(sms, -7);
}
END_TEST

/* ---- the test helpers' conversions ------------------------------------------------ */

static double f16_val(uint16_t h) { return kt_f16_to_f32(h); }

START_TEST(helper_conversions_known_values)
{
  ck_assert_uint_eq(kt_f32_to_bf16(1.f), 0x3f80);
  ck_assert_uint_eq(kt_f32_to_bf16(-2.f), 0xc000);
  ck_assert_uint_eq(kt_f32_to_bf16(1.f + 0x1p-8f), 0x3f80);           /* tie, to even */
  ck_assert_uint_eq(kt_f32_to_bf16(1.f + 3 * 0x1p-8f), 0x3f82);       /* tie, to even */
  ck_assert_uint_eq(kt_f32_to_bf16(1.f + 0x1p-8f + 0x1p-20f), 0x3f81);
  ck_assert_uint_eq(kt_f32_to_bf16(3.4028235e38f), 0x7f80);           /* rounds to inf */
  ck_assert_uint_eq(kt_f32_to_bf16(INFINITY), 0x7f80);
  ck_assert_uint_eq(kt_f32_to_bf16(-0.f), 0x8000);
  ck_assert_uint_eq(kt_f32_to_bf16(0x1p-133f), 0x0001);               /* bf16 subnormal */
  ck_assert(isnan(kt_bf16_to_f32(kt_f32_to_bf16(NAN))));
  ck_assert(kt_bf16_to_f32(0x3f80) == 1.f);
  ck_assert(kt_bf16_to_f32(0xffff) != kt_bf16_to_f32(0xffff));        /* the poison pattern is NaN */

  ck_assert_uint_eq(kt_f32_to_f16(1.f), 0x3c00);
  ck_assert_uint_eq(kt_f32_to_f16(-2.f), 0xc000);
  ck_assert_uint_eq(kt_f32_to_f16(65504.f), 0x7bff);
  ck_assert_uint_eq(kt_f32_to_f16(65519.f), 0x7bff);
  ck_assert_uint_eq(kt_f32_to_f16(65520.f), 0x7c00);                  /* tie with inf: to even */
  ck_assert_uint_eq(kt_f32_to_f16(1e10f), 0x7c00);
  ck_assert_uint_eq(kt_f32_to_f16(-INFINITY), 0xfc00);
  ck_assert_uint_eq(kt_f32_to_f16(0x1p-14f), 0x0400);                 /* smallest normal */
  ck_assert_uint_eq(kt_f32_to_f16(0x1p-14f - 0x1p-24f), 0x03ff);      /* largest subnormal */
  ck_assert_uint_eq(kt_f32_to_f16(0x1p-24f), 0x0001);                 /* smallest subnormal */
  ck_assert_uint_eq(kt_f32_to_f16(0x1p-25f), 0x0000);                 /* tie with 0: to even */
  ck_assert_uint_eq(kt_f32_to_f16(0x1p-25f * 1.0000001f), 0x0001);
  ck_assert_uint_eq(kt_f32_to_f16(3 * 0x1p-25f), 0x0002);             /* tie: to even */
  ck_assert_uint_eq(kt_f32_to_f16(5 * 0x1p-25f), 0x0002);             /* tie: to even */
  ck_assert_uint_eq(kt_f32_to_f16(0x1p-26f), 0x0000);
  ck_assert_uint_eq(kt_f32_to_f16(1e-30f), 0x0000);
  ck_assert_uint_eq(kt_f32_to_f16(-1e-30f), 0x8000);
  ck_assert_uint_eq(kt_f32_to_f16(1.f + 0x1p-11f), 0x3c00);           /* tie: to even */
  ck_assert_uint_eq(kt_f32_to_f16(1.f + 3 * 0x1p-11f), 0x3c02);
  ck_assert(isnan(kt_f16_to_f32(kt_f32_to_f16(NAN))));
  ck_assert(kt_f16_to_f32(0x0001) == 0x1p-24f);
  ck_assert(kt_f16_to_f32(0x7bff) == 65504.f);
  ck_assert(kt_f16_to_f32(0xfc00) == -INFINITY);
  ck_assert(isnan(kt_f16_to_f32(0xffff)));
}
END_TEST

START_TEST(helper_conversions_round_trip_and_round_to_nearest)
{
  for (uint32_t h = 0; h < 0x10000u; h++) {
    const float f = kt_f16_to_f32((uint16_t)h), b = kt_bf16_to_f32((uint16_t)h);
    if (!isnan(f)) ck_assert_msg(kt_f32_to_f16(f) == h, "f16 0x%04x -> %a -> 0x%04x", h, (double)f, kt_f32_to_f16(f));
    if (!isnan(b)) ck_assert_msg(kt_f32_to_bf16(b) == h, "bf16 0x%04x -> %a -> 0x%04x", h, (double)b, kt_f32_to_bf16(b));
  }
  /* random floats: the result is a nearest f16/bf16, ties to even */
  kt_rng r = kt_rng_for("conversions", 0);
  for (int k = 0; k < 200000; k++) {
    const float f = kt_bits_f32((uint32_t)kt_range(&r, 0x32000000, 0x477fe000));  /* 2^-27 .. 65504 */
    const uint16_t h = kt_f32_to_f16(f);
    const double d = fabs((double)f - f16_val(h));
    if (h > 0) ck_assert_msg(d <= fabs((double)f - f16_val((uint16_t)(h - 1))), "f16(%a) = 0x%04x, below is nearer", (double)f, h);
    if (h < 0x7bff) {
      const double up = fabs((double)f - f16_val((uint16_t)(h + 1)));
      ck_assert_msg(d <= up, "f16(%a) = 0x%04x, above is nearer", (double)f, h);
      if (d == up) ck_assert_msg((h & 1) == 0, "f16(%a): tie went to odd 0x%04x", (double)f, h);
    }
    const float g = kt_bits_f32((uint32_t)kt_u64(&r) & 0x7f7fffffu);
    const uint16_t b = kt_f32_to_bf16(g);
    if (b == 0x7f80) {   /* overflow: only at or past the largest bf16 plus half an ulp */
      ck_assert_msg((double)g >= 0x1.fep127 + 0x1p119, "bf16(%a) overflowed", (double)g);
      continue;
    }
    const double db = fabs((double)g - kt_bf16_to_f32(b));
    if (b > 0) ck_assert_msg(db <= fabs((double)g - kt_bf16_to_f32((uint16_t)(b - 1))), "bf16(%a) = 0x%04x", (double)g, b);
    if (b < 0x7f7f) ck_assert_msg(db <= fabs((double)g - kt_bf16_to_f32((uint16_t)(b + 1))), "bf16(%a) = 0x%04x", (double)g, b);
  }
  /* kt_store / kt_load agree with the conversions */
  unsigned char buf[16];
  ck_assert(kt_store(KITE_BF16, buf, 3, 1.f + 3 * 0x1p-8f) == kt_load(KITE_BF16, buf, 3));
  ck_assert(kt_store(KITE_F16, buf, 2, 0x1p-25f * 3) == 0x1p-23f);
  ck_assert(kt_load(KITE_F16, buf, 2) == 0x1p-23f);
  ck_assert(kt_store(KITE_F32, buf, 1, 0.1f) == 0.1f && kt_load(KITE_F32, buf, 1) == 0.1f);
}
END_TEST

START_TEST(no_gpu_is_visible)
{
  /* test_runtime hides every GPU; kt_gpu_usable must say so, with a reason */
  char why[256] = "";
  ck_assert_int_eq(kt_gpu_usable(why, sizeof why), 0);
  ck_assert_msg(why[0] != '\0', "kt_gpu_usable gave no reason");
}
END_TEST

/* ---- tuned rules ------------------------------------------------------------------------ */

/* A row variant of softmax bf16 for [lo, hi] at alignment al. */
#define RV(nm, lo, hi, al)                                                                          \
  { .name = nm, .op = "softmax", .dtype = KITE_BF16, .dtype_out = KITE_BF16, .n_min = lo, .n_max = hi, \
    .align = al, .rank = 0, .launch = stub_launch }
/* A rule at (m, n, k) for variant index v; logs as kite-gen writes them. */
#define RULE(op_, ab_, c_, m_, n_, k_, v_)                                                          \
  { .op = op_, .dtype = ab_, .dtype_out = c_, .m = m_, .n = n_, .k = k_, .lm = (float)log2(m_),     \
    .ln = (float)log2(n_), .lk = (k_) > 0 ? (float)log2((double)(k_)) : 0.f, .variant = v_, .time_us = 1.f }

static const struct kite_variant rule_tab[] = {
  RV("sm_small", 1, 1024, 16),      /* 0 */
  RV("sm_mid", 1, 8192, 16),        /* 1 */
  RV("sm_big", 1, 1 << 20, 16),     /* 2 */
  RV("sm_any", 1, 1 << 20, 2),      /* 3: element-aligned */
  SV("gemm_a", KITE_BF16, KITE_BF16, 16, 0, 128, 256),   /* 4 */
  SV("gemm_b", KITE_BF16, KITE_BF16, 16, 0, 128, 128),   /* 5 */
  SV("gemm_c", KITE_BF16, KITE_F32, 16, 0, 128, 128),    /* 6 */
};
static const struct kite_rule rules[] = {
  RULE("softmax", KITE_BF16, KITE_BF16, 65536, 1024, 0, 0),
  RULE("softmax", KITE_BF16, KITE_BF16, 16384, 4096, 0, 1),
  RULE("softmax", KITE_BF16, KITE_BF16, 4096, 16384, 0, 2),
  RULE("softmax", KITE_F16, KITE_F16, 4096, 2048, 0, 3),
  RULE("gemm", KITE_BF16, KITE_BF16, 4096, 4096, 4096, 4),
  RULE("gemm", KITE_BF16, KITE_BF16, 256, 4096, 4096, 5),
  RULE("gemm", KITE_BF16, KITE_F32, 4096, 4096, 4096, 6),
};
#define NRULES ((int32_t)(sizeof rules / sizeof rules[0]))
#define NTAB ((int32_t)(sizeof rule_tab / sizeof rule_tab[0]))

static const char *row_rule(int64_t n, int32_t align)
{
  const struct kite_row_fit fit = { KITE_BF16, n, align };
  const struct kite_rule *r = kite__rule_pick(rules, NRULES, rule_tab, NTAB, "softmax", KITE_BF16, KITE_BF16, 7,
                                              n, 0, kite__row_fits, &fit);
  return r ? rule_tab[r->variant].name : NULL;
}

/* The nearest tuned N in log2 wins, between and beyond the tuned points. */
START_TEST(rule_nearest_bucket)
{
  ck_assert_str_eq(row_rule(1, 16), "sm_small");
  ck_assert_str_eq(row_rule(1024, 16), "sm_small");
  ck_assert_str_eq(row_rule(3000, 16), "sm_mid");       /* log2 11.55: nearer 12 than 10 */
  ck_assert_str_eq(row_rule(8192, 16), "sm_mid");
  ck_assert_str_eq(row_rule(12000, 16), "sm_big");      /* 13.55: nearer 14 */
  ck_assert_str_eq(row_rule(1 << 20, 16), "sm_big");
}
END_TEST

/* A rule whose variant cannot take the problem gives way to the next nearest. */
START_TEST(rule_constraints_filter)
{
  ck_assert_str_eq(row_rule(1500, 16), "sm_mid");       /* nearest is 1024, but sm_small ends there */
  ck_assert_ptr_null(row_rule(1 << 21, 16));            /* no tuned variant is that long: heuristic */
  ck_assert_ptr_null(row_rule(1024, 8));                /* the 16-byte variants need alignment */
  const struct kite_row_fit f16 = { KITE_F16, 1024, 2 };
  /* f16's rule names a bf16 variant: it never fits, so no rule */
  ck_assert_ptr_null(kite__rule_pick(rules, NRULES, rule_tab, NTAB, "softmax", KITE_F16, KITE_F16, 1, 1024, 0,
                                     kite__row_fits, &f16));
  const struct kite_row_fit bf = { KITE_BF16, 1024, 16 };
  ck_assert_ptr_null(kite__rule_pick(rules, NRULES, rule_tab, NTAB, "rmsnorm", KITE_BF16, KITE_BF16, 1, 1024, 0,
                                     kite__row_fits, &bf));
  ck_assert_ptr_null(kite__rule_pick(rules, 0, rule_tab, NTAB, "softmax", KITE_BF16, KITE_BF16, 1, 1024, 0,
                                     kite__row_fits, &bf));
}
END_TEST

/* A span holds its own ends; other ops, dtypes and lengths find none. */
START_TEST(span_find)
{
  static const struct kite_row_span spans[] = {
    { "softmax", KITE_BF16, 1, 1024, 0 },
    { "softmax", KITE_BF16, 1025, 4096, 1 },
    { "softmax", KITE_F16, 1, 4096, 2 },
  };
  ck_assert_ptr_eq(kite__span_find(spans, 3, "softmax", KITE_BF16, 1), &spans[0]);
  ck_assert_ptr_eq(kite__span_find(spans, 3, "softmax", KITE_BF16, 1024), &spans[0]);
  ck_assert_ptr_eq(kite__span_find(spans, 3, "softmax", KITE_BF16, 1025), &spans[1]);
  ck_assert_ptr_eq(kite__span_find(spans, 3, "softmax", KITE_F16, 1025), &spans[2]);
  ck_assert_ptr_null(kite__span_find(spans, 3, "softmax", KITE_BF16, 4097));
  ck_assert_ptr_null(kite__span_find(spans, 3, "softmax", KITE_F32, 100));
  ck_assert_ptr_null(kite__span_find(spans, 3, "rmsnorm", KITE_BF16, 100));
  ck_assert_ptr_null(kite__span_find(spans, 0, "softmax", KITE_BF16, 100));
}
END_TEST

/* The committed spans of set _i: every one names a variant of its op and
   dtype that takes every N in it, and kite__pick follows them for aligned
   data when the set is the current one. */
START_TEST(span_table)
{
  const struct kite_gpu_table *t = &kite_gpu_tables[_i];
  kite__table_force(_i);
  ck_assert_ptr_eq(kite__table(NULL), t);
  for (int32_t i = 0; i < t->spans_len; i++) {
    const struct kite_row_span *s = &t->spans[i];
    ck_assert(s->variant >= 0 && s->variant < kite_variants_len && s->n_lo >= 1 && s->n_lo <= s->n_hi);
    const struct kite_variant *v = &kite_variants[s->variant];
    ck_assert_msg(strcmp(v->op, s->op) == 0 && v->dtype == s->dtype && v->n_min <= s->n_lo && s->n_hi <= v->n_max,
                  "span %d [%lld, %lld] names %s [%lld, %lld]", (int)i, (long long)s->n_lo, (long long)s->n_hi,
                  v->name, (long long)v->n_min, (long long)v->n_max);
    const int64_t mid = s->n_lo + (s->n_hi - s->n_lo) / 2;
    struct kite_row_why why;
    ck_assert_ptr_eq(kite__pick(s->op, s->dtype, mid, 16, &why), v);
    ck_assert_ptr_eq(why.span, s);
    ck_assert_ptr_eq(why.table, t);
  }
  kite__table_force(-1);
}
END_TEST

/* Each named set is found by a device name holding its name (any case) and
   by its own name; other devices get the first set.  kite_explain ends
   with the set it used and why. */
START_TEST(gpu_sets_by_device_name)
{
  char dev[128], buf[2048], want[160];
  for (int32_t i = 0; i < kite_gpu_tables_len; i++) {
    const char *g = kite_gpu_tables[i].gpu;
    if (!g[0]) continue;
    char low[128];
    snprintf(dev, sizeof dev, "NVIDIA %s 80GB HBM3", g);
    snprintf(low, sizeof low, "%s", dev);
    for (char *c = dev; *c; c++) *c = (char)toupper((unsigned char)*c);
    int32_t first = i;   /* an earlier set whose name the device's also holds comes first */
    for (int32_t j = i - 1; j >= 0; j--)
      if (kite_gpu_tables[j].gpu[0] && strstr(low, kite_gpu_tables[j].gpu)) first = j;
    ck_assert_int_eq(kite__table_for_device(dev), first);
    ck_assert_int_eq(kite__table_named(g), i);
    kite__table_force(i);
    KT_KITE_OK(kite_explain("softmax", KITE_BF16, 4, 1000, 0, buf, sizeof buf));
    snprintf(want, sizeof want, " [table %s (set by the program)]", g);
    ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
    KT_KITE_OK(kite_explain("gemm", KITE_BF16, 512, 512, 512, buf, sizeof buf));
    ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
  }
  kite__table_force(-1);
  ck_assert_int_eq(kite__table_for_device("NVIDIA A100-SXM4-80GB"), 0);
  ck_assert_int_eq(kite__table_for_device(""), 0);
  ck_assert_int_eq(kite__table_named("no_such_gpu"), -1);
  ck_assert_int_eq(kite__table_named(""), -1);
  kite__table_force(kite_gpu_tables_len);   /* out of range: back to choosing */
  enum kite_table_how how;
  const struct kite_gpu_table *t = kite__table(&how);
  int d;
  if (cudaGetDevice(&d) != cudaSuccess && !getenv("KITE_GPU")) {
    ck_assert_ptr_eq(t, &kite_gpu_tables[0]);
    ck_assert_int_eq(how, KITE_TABLE_NO_DEVICE);
    KT_KITE_OK(kite_explain("softmax", KITE_BF16, 4, 1000, 0, buf, sizeof buf));
    snprintf(want, sizeof want, " [table %s, the default (no device)]",
             kite_gpu_tables[0].gpu[0] ? kite_gpu_tables[0].gpu : "(unnamed)");
    ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
  } else
    ck_assert(how == KITE_TABLE_DEVICE || how == KITE_TABLE_ENV || how == KITE_TABLE_ENV_UNKNOWN);
  char small[8] = "abc";
  kite__explain_table(t, how, small, sizeof small);   /* truncated, never overrun */
  ck_assert_int_lt((int)strlen(small), (int)sizeof small);
}
END_TEST

/* gemm rules: nearest in (M, N, K) log2 space, dtype_out and alignment respected. */
START_TEST(rule_gemm_buckets)
{
  const struct kite_gemm_fit bf = { KITE_BF16, KITE_BF16, 16 }, f32 = { KITE_BF16, KITE_F32, 16 },
                             loose = { KITE_BF16, KITE_BF16, 8 };
  const struct kite_rule *r;
  r = kite__rule_pick(rules, NRULES, rule_tab, NTAB, "gemm", KITE_BF16, KITE_BF16, 8192, 8192, 8192,
                      kite__gemm_fits, &bf);
  ck_assert_str_eq(rule_tab[r->variant].name, "gemm_a");
  r = kite__rule_pick(rules, NRULES, rule_tab, NTAB, "gemm", KITE_BF16, KITE_BF16, 128, 4000, 5000,
                      kite__gemm_fits, &bf);
  ck_assert_str_eq(rule_tab[r->variant].name, "gemm_b");
  r = kite__rule_pick(rules, NRULES, rule_tab, NTAB, "gemm", KITE_BF16, KITE_F32, 128, 4000, 5000,
                      kite__gemm_fits, &f32);
  ck_assert_str_eq(rule_tab[r->variant].name, "gemm_c");
  ck_assert_ptr_null(kite__rule_pick(rules, NRULES, rule_tab, NTAB, "gemm", KITE_BF16, KITE_BF16, 128, 4000, 5000,
                                     kite__gemm_fits, &loose));
}
END_TEST

/* Set _i's committed rules (if any) name variants of their own op and
   dtypes; without rules the public pick is the heuristic's. */
START_TEST(committed_rules_are_consistent)
{
  const struct kite_gpu_table *t = &kite_gpu_tables[_i];
  ck_assert(t->gpu != NULL && (t->gpu[0] || _i == 0));   /* only a lone default set goes unnamed */
  for (int32_t j = 0; j < _i; j++) ck_assert_str_ne(kite_gpu_tables[j].gpu, t->gpu);
  kite__table_force(_i);
  for (int32_t i = 0; i < t->rules_len; i++) {
    const struct kite_rule *r = &t->rules[i];
    ck_assert_int_ge(r->variant, 0);
    ck_assert_int_lt(r->variant, kite_variants_len);
    const struct kite_variant *v = &kite_variants[r->variant];
    ck_assert_str_eq(v->op, r->op);
    ck_assert_int_eq(v->dtype, r->dtype);
    ck_assert_int_eq(v->dtype_out, r->dtype_out);
    ck_assert(r->n >= 1 && r->m >= 1 && r->k >= 0 && r->time_us > 0.f);
  }
  for (int32_t i = 0; i < t->models_len; i++) {
    const struct kite_gemm_model *m = &t->models[i];
    ck_assert(m->variant >= 0 && m->variant < kite_variants_len);
    ck_assert_str_eq(kite_variants[m->variant].op, "gemm");
    ck_assert(kite_variants[m->variant].tile_m > 0 && kite_variants[m->variant].tile_n > 0);
    ck_assert(m->launch_us >= 0.f && m->us_per_k > 0.f && m->k_extra >= 0.f && m->ragged > 0.f && m->points >= 4);
    if (i > 0) ck_assert_int_gt(m->variant, t->models[i - 1].variant);   /* table order, once each */
  }
  if (t->rules_len == 0 && t->spans_len == 0)
    for (int64_t n = 1; n <= 300000; n = n * 3 + 1)
      ck_assert_ptr_eq(kite__pick("softmax", KITE_BF16, n, 16, NULL),
                       kite__row_heuristic(kite_variants, kite_variants_len, "softmax", KITE_BF16, n, 16));
  kite__table_force(-1);
}
END_TEST

/* A committed gemm rule decides at its own shape and just beside it, not
   halfway to the next grid point (KITE_GEMM_RULE_REACH): there the
   heuristic does. */
START_TEST(gemm_rule_reach)
{
  const struct kite_gpu_table *t = &kite_gpu_tables[_i];
  int seen = 0;
  kite__table_force(_i);
  for (int32_t i = 0; i < t->rules_len; i++) {
    const struct kite_rule *r = &t->rules[i];
    if (strcmp(r->op, "gemm") != 0 || r->m != 4096 || r->n != 4096 || r->k != 4096) continue;
    seen++;
    const struct kite_rule *at = kite__gemm_rule(r->dtype, r->dtype_out, 4096, 4096, 4096, 16);
    ck_assert_ptr_eq(at, r);
    ck_assert_ptr_eq(kite__gemm_rule(r->dtype, r->dtype_out, 4400, 4096, 3900, 16), r);
    ck_assert_ptr_null(kite__gemm_rule(r->dtype, r->dtype_out, 5800, 4096, 4096, 16));
    ck_assert_ptr_null(kite__gemm_rule(r->dtype, r->dtype_out, 4096, 4096, 2896, 16));
  }
  if (!seen) printf("gemm_rule_reach: no tuned rule at 4096^3 in set %s; nothing to check\n", t->gpu);
  kite__table_force(-1);
}
END_TEST

/* The measured gemm models: the fitting variant predicted fastest wins (the
   big tile when both fill their waves, the small one when the big one's
   only wave is half empty, the big one again when rows are not whole
   128-byte lines and the small one's ragged factor is the larger); other
   dtypes and alignments never count. */
START_TEST(gemm_model_pick)
{
  static const struct kite_gemm_model models[] = {
    { 4, 3.0f, 0.0095f, 400.f, 1.1f, 50 },   /* gemm_a: 128x256 tiles */
    { 5, 4.0f, 0.005f, 300.f, 1.5f, 50 },    /* gemm_b: 128x128 */
    { 6, 1.0f, 0.001f, 0.f, 1.0f, 50 },      /* gemm_c: bf16 -> f32, cheapest of all */
  };
  double us = 0;
  /* 4096^2: a 4 waves of 512 tiles, 3 + 4 * 4496 * 0.0095 = 173.85; b 8 waves, 4 + 8 * 4396 * 0.005 = 179.84 */
  const struct kite_gemm_model *m = kite__gemm_model_pick(models, 3, rule_tab, NTAB, KITE_BF16, KITE_BF16, 4096,
                                                          4096, 4096, 128, 132, &us);
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(rule_tab[m->variant].name, "gemm_a");
  ck_assert_double_eq_tol(us, 173.848, 1e-3);
  /* 1024 x 2048: one wave each; a 3 + 4496 * 0.0095 = 45.71, b 4 + 4396 * 0.005 = 25.98 */
  m = kite__gemm_model_pick(models, 3, rule_tab, NTAB, KITE_BF16, KITE_BF16, 1024, 2048, 4096, 128, 132, &us);
  ck_assert_str_eq(rule_tab[m->variant].name, "gemm_b");
  ck_assert_double_eq_tol(us, 25.98, 1e-3);
  /* rows of 16-byte multiples only: a 173.85 * 1.1 = 191.23, b 179.84 * 1.5 = 269.76 */
  m = kite__gemm_model_pick(models, 3, rule_tab, NTAB, KITE_BF16, KITE_BF16, 4096, 4096, 4096, 16, 132, &us);
  ck_assert_str_eq(rule_tab[m->variant].name, "gemm_a");
  ck_assert_double_eq_tol(us, 191.233, 1e-3);
  /* 1536 x 4096: a 2 waves, 3 + 2 * 4496 * 0.0095 = 88.42; b 3 waves, 4 + 3 * 4396 * 0.005 = 69.94; ragged
     (64-byte rows) a 97.26, b 104.91 */
  m = kite__gemm_model_pick(models, 3, rule_tab, NTAB, KITE_BF16, KITE_BF16, 1536, 4096, 4096, 128, 132, &us);
  ck_assert_str_eq(rule_tab[m->variant].name, "gemm_b");
  m = kite__gemm_model_pick(models, 3, rule_tab, NTAB, KITE_BF16, KITE_BF16, 1536, 4096, 4096, 64, 132, &us);
  ck_assert_str_eq(rule_tab[m->variant].name, "gemm_a");
  ck_assert_double_eq_tol(us, 97.2664, 1e-3);
  m = kite__gemm_model_pick(models, 3, rule_tab, NTAB, KITE_BF16, KITE_F32, 1024, 2048, 4096, 16, 132, &us);
  ck_assert_str_eq(rule_tab[m->variant].name, "gemm_c");
  ck_assert_ptr_null(kite__gemm_model_pick(models, 3, rule_tab, NTAB, KITE_BF16, KITE_BF16, 64, 64, 64, 8, 132, &us));
  ck_assert_ptr_null(kite__gemm_model_pick(models, 0, rule_tab, NTAB, KITE_BF16, KITE_BF16, 64, 64, 64, 16, 132, &us));
}
END_TEST

/* The op indexes cover exactly each op's variants, and set _i's rules and spans. */
START_TEST(op_range_matches_the_table)
{
  const struct kite_gpu_table *t = &kite_gpu_tables[_i];
  const char *ops[] = { "rmsnorm", "softmax", "cross_entropy", "gemm", "no_such_op" };
  for (int k = 0; k < 5; k++) {
    int32_t lo, hi, n = 0;
    kite__op_range(ops[k], &lo, &hi);
    for (int32_t i = 0; i < kite_variants_len; i++) n += strcmp(kite_variants[i].op, ops[k]) == 0;
    ck_assert_int_eq(hi > lo ? hi - lo : 0, n);
    for (int32_t i = lo; i < hi; i++) ck_assert_str_eq(kite_variants[i].op, ops[k]);
    kite__rule_range(t, ops[k], &lo, &hi);
    n = 0;
    for (int32_t i = 0; i < t->rules_len; i++) n += strcmp(t->rules[i].op, ops[k]) == 0;
    ck_assert_int_eq(hi > lo ? hi - lo : 0, n);
    for (int32_t i = lo; i < hi; i++) ck_assert_str_eq(t->rules[i].op, ops[k]);
    kite__span_range(t, ops[k], &lo, &hi);
    n = 0;
    for (int32_t i = 0; i < t->spans_len; i++) n += strcmp(t->spans[i].op, ops[k]) == 0;
    ck_assert_int_eq(hi > lo ? hi - lo : 0, n);
    for (int32_t i = lo; i < hi; i++) ck_assert_str_eq(t->spans[i].op, ops[k]);
  }
}
END_TEST

/* Lookup cost: a benchmark, printed, never asserted (timed unit tests are not allowed). */
START_TEST(rule_lookup_cost)
{
  struct timespec t0, t1;
  const int reps = 200000;
  const struct kite_variant *sink = NULL;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < reps; i++) sink = kite__pick("softmax", KITE_BF16, 1000 + (i & 1023), 16, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / reps;
  const struct kite_gpu_table *t = kite__table(NULL);
  printf("kite: row-op pick (set %s: %d spans, %d rules; %d variants): %.0f ns per lookup\n", t->gpu,
         (int)t->spans_len, (int)t->rules_len, (int)kite_variants_len, ns);
  ck_assert_ptr_nonnull(sink);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int32_t lo, hi;
  for (int i = 0; i < reps / 10; i++) {
    kite__op_range("gemm", &lo, &hi);
    sink = kite__gemm_pick(kite_variants + lo, hi - lo, KITE_BF16, KITE_BF16, 4096 + (i & 255), 4096, 4096, 16, 132);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double gns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (reps / 10);
  printf("kite: gemm heuristic pick (%d gemm variants): %.0f ns per lookup\n", (int)(hi - lo), gns);
  ck_assert_ptr_nonnull(sink);
  /* kite_gemm's own order: a tuned rule within reach, else the measured models */
  const struct kite_gemm_model *m = NULL;
  double us;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < reps / 10; i++)
    if (!kite__gemm_rule(KITE_BF16, KITE_BF16, 3000 + (i & 255), 5000, 700, 16))
      m = kite__gemm_model_pick(t->models, t->models_len, kite_variants, kite_variants_len, KITE_BF16,
                                KITE_BF16, 3000 + (i & 255), 5000, 700, 16, 132, &us);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double mns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (reps / 10);
  printf("kite: gemm rule + model pick (%d rules, %d models): %.0f ns per lookup%s\n", (int)t->rules_len,
         (int)t->models_len, mns, m ? "" : " (no model picked)");
}
END_TEST

/* ---- rmsnorm_bwd (test_norm runs it on a GPU) --------------------------------------- */

#define FDW FAKE(0xa0000000)
#define FWS FAKE(0xb0000000)

/* A valid rmsnorm_bwd problem (4 rows of 1000, strides 1024, dw asked for). */
struct nbwd { kite_dtype dt; kite_row_args a; void *ws; size_t ws_bytes; };

static struct nbwd nbwd_valid(kite_dtype dt)
{
  struct nbwd p;
  memset(&p, 0, sizeof p);
  p.dt = dt;
  p.a.M = 4, p.a.N = 1000, p.a.x = FX, p.a.ldx = 1024, p.a.y = FY, p.a.ldy = 1024;
  p.a.w = FW, p.a.rstd = FRSTD, p.a.dy = FDY, p.a.lddy = 1024, p.a.dw = FDW;
  p.a.partials = FWS, p.a.parts = 4;
  p.ws = FWS, p.ws_bytes = (size_t)1 << 30;
  return p;
}

static kite_status nbwd_entry(const struct nbwd *p)
{
  const kite_row_args *a = &p->a;
  return kite_rmsnorm_bwd(p->dt, a->M, a->N, a->x, a->ldx, a->w, a->w_offset, a->rstd, a->dy, a->lddy, a->y,
                          a->ldy, a->dw, p->ws, p->ws_bytes, 0);
}

/* Every invalid argument gives its error through the entry point (and, where
   kite_row_args can say it, kite_run_variant), launches nothing, says why;
   the valid call stops at the device. */
START_TEST(rmsnorm_bwd_arguments)
{
  const kite_dtype dt = row_dtypes[_i];
  const int es = kt_dtype_size(dt);
  const struct kite_variant *v = any_layout_variant("rmsnorm_bwd", dt);
  const uint64_t before = kite__launch_count();
  for (int k = 0;; k++) {
    struct nbwd p = nbwd_valid(dt);
    kite_row_args *a = &p.a;
    kite_status want = KITE_ERR_INVALID_ARG;
    int entry_only = 0;
    const char *desc;
    switch (k) {
    case 0: desc = "x NULL"; a->x = NULL; break;
    case 1: desc = "w NULL"; a->w = NULL; break;
    case 2: desc = "rstd NULL"; a->rstd = NULL; break;
    case 3: desc = "dy NULL"; a->dy = NULL; break;
    case 4: desc = "dx NULL"; a->y = NULL; break;
    case 5: desc = "workspace NULL"; p.ws = a->partials = NULL; break;
    case 6: desc = "workspace 8 bytes off 16"; p.ws = a->partials = (float *)cpy(FWS, 8); break;
    case 7: desc = "dw 2 bytes off"; a->dw = (float *)cpy(FDW, 2); break;
    case 8: desc = "rstd 2 bytes off"; a->rstd = (float *)cpy(FRSTD, 2); break;
    case 9: desc = "w one byte off"; a->w = cpy(FW, 1); break;
    case 10: desc = "dy one byte off"; a->dy = cpy(FDY, 1); break;
    case 11: desc = "lddy = N - 1"; a->lddy = a->N - 1; break;
    case 12: desc = "ldx = N - 1"; a->ldx = a->N - 1; break;
    case 13: desc = "dx one element into dy"; a->y = cpy(FDY, es); break;
    case 14: desc = "dx == x with another stride"; a->y = FX; a->ldy = 1040; break;
    case 15: desc = "dw inside the workspace"; a->dw = (float *)cpy(FWS, 64); break;
    case 16: desc = "dw inside dx"; a->dw = (float *)cpy(FY, 64); break;
    case 17: desc = "w_offset NaN"; a->w_offset = NAN; break;
    case 18: desc = "w_offset inf"; a->w_offset = INFINITY; break;
    case 19: desc = "M = -1"; a->M = -1; break;
    case 20: desc = "N = 2^31"; a->N = a->ldx = a->ldy = a->lddy = (int64_t)INT32_MAX + 1;
      want = KITE_ERR_UNSUPPORTED; break;
    case 21: desc = "dtype KITE_E4M3"; p.dt = KITE_E4M3; want = KITE_ERR_UNSUPPORTED; entry_only = 1; break;
    case 22: desc = "parts = 0"; a->parts = 0; p.ws = NULL; break;
    default: desc = NULL;
    }
    if (!desc) break;
    for (int path = 0; path < 2 - entry_only; path++) {
      kite__fail(KITE_OK, "%s", "");
      const kite_status s = path == 0 ? nbwd_entry(&p) : kite_run_variant(v->name, a, 0);
      ck_assert_msg(s == want, "rmsnorm_bwd %s, %s via %s: got %s (%s), want %s", kt_dtype_name(dt), desc,
                    path ? v->name : "entry", kite_status_str(s), kite_last_error(), kite_status_str(want));
      ck_assert_msg(kite_last_error()[0] != '\0', "%s: no text", desc);
    }
  }
  struct nbwd p = nbwd_valid(dt);
  expect_valid_no_gpu(nbwd_entry(&p), "rmsnorm_bwd, a valid call");
  expect_valid_no_gpu(kite_run_variant(v->name, &p.a, 0), "rmsnorm_bwd, a valid call via a variant");
  p.a.dw = NULL, p.ws = NULL, p.ws_bytes = 0;   /* dx alone needs no workspace */
  expect_valid_no_gpu(nbwd_entry(&p), "rmsnorm_bwd without dw");
  p.a.y = (void *)p.a.dy, p.a.ldy = p.a.lddy;           /* in place over dy */
  expect_valid_no_gpu(nbwd_entry(&p), "rmsnorm_bwd in place");
  p = nbwd_valid(dt);
  p.a.M = 0;
  KT_KITE_OK(nbwd_entry(&p));
  size_t bytes = 1;
  KT_KITE_EXPECT(kite_rmsnorm_bwd_workspace(-1, 10, &bytes), KITE_ERR_INVALID_ARG);
  KT_KITE_EXPECT(kite_rmsnorm_bwd_workspace(10, 10, NULL), KITE_ERR_INVALID_ARG);
  KT_KITE_OK(kite_rmsnorm_bwd_workspace(10, 0, &bytes));
  ck_assert_msg(bytes == 0, "an empty problem's workspace: %zu bytes", bytes);
  ck_assert_msg(kite_rmsnorm_bwd_workspace(10, 10, &bytes) == KITE_ERR_CUDA, "the workspace without a GPU");
  ck_assert_msg(kite__launch_count() == before, "rmsnorm_bwd launched without a GPU");
}
END_TEST

/* kite_rmsnorm_fwd_residual's own checks (with fake pointers: the valid
   calls stop at the device). */
START_TEST(rmsnorm_residual_arguments)
{
  const kite_dtype dt = row_dtypes[_i];
  const int es = kt_dtype_size(dt);
  const uint64_t before = kite__launch_count();
  for (int k = 0;; k++) {
    const void *x = FX, *res = FDY, *w = FW;
    void *y = FY, *h = FDW;
    int64_t ldres = 1024, ldh = 1024, ldy = 1024;
    float off = 1.f;
    kite_status want = KITE_ERR_INVALID_ARG;
    const char *desc;
    switch (k) {
    case 0: desc = "h without a residual"; res = NULL; break;
    case 1: desc = "ldres = N - 1"; ldres = 999; break;
    case 2: desc = "ldh = N - 1"; ldh = 999; break;
    case 3: desc = "residual one byte off"; res = cpy(FDY, 1); break;
    case 4: desc = "h one byte off"; h = cpy(FDW, 1); break;
    case 5: desc = "h one element into x"; h = cpy(FX, es); break;
    case 6: desc = "y on the residual"; y = (void *)res; break;
    case 7: desc = "y == h"; y = h; break;
    case 8: desc = "w_offset inf"; off = INFINITY; break;
    case 9: desc = "h == residual with another stride"; h = (void *)res; ldh = 1040; break;
    case 10: desc = "dtype KITE_E4M3"; want = KITE_ERR_UNSUPPORTED; break;
    default: desc = NULL;
    }
    if (!desc) break;
    kite__fail(KITE_OK, "%s", "");
    const kite_status s = kite_rmsnorm_fwd_residual(k == 10 ? KITE_E4M3 : dt, 4, 1000, x, 1024, res, ldres, w, off,
                                                    1e-5f, y, ldy, h, ldh, FRSTD, 0);
    ck_assert_msg(s == want, "rmsnorm_fwd_residual %s, %s: got %s (%s), want %s", kt_dtype_name(dt), desc,
                  kite_status_str(s), kite_last_error(), kite_status_str(want));
  }
  expect_valid_no_gpu(kite_rmsnorm_fwd_residual(dt, 4, 1000, FX, 1024, FDY, 1024, FW, 1.f, 1e-5f, FY, 1024, FDW,
                                                1024, FRSTD, 0), "rmsnorm_fwd_residual, h apart");
  expect_valid_no_gpu(kite_rmsnorm_fwd_residual(dt, 4, 1000, FX, 1024, FDY, 1024, FW, 0.f, 1e-5f, FX, 1024, FDY,
                                                1024, NULL, 0), "rmsnorm_fwd_residual, y == x, h == residual");
  expect_valid_no_gpu(kite_rmsnorm_fwd_residual(dt, 4, 1000, FX, 1024, NULL, 0, FW, 1.f, 1e-5f, FY, 1024, NULL, 0,
                                                NULL, 0), "rmsnorm_fwd_residual without a residual");
  KT_KITE_OK(kite_rmsnorm_fwd_residual(dt, 0, 1000, NULL, 0, NULL, 0, NULL, 0.f, 0.f, NULL, 0, NULL, 0, NULL, 0));
  ck_assert_msg(kite__launch_count() == before, "rmsnorm_fwd_residual launched without a GPU");
}
END_TEST

/* kite_layernorm_fwd's checks with fake pointers (the valid calls stop at the device). */
START_TEST(layernorm_arguments)
{
  const kite_dtype dt = row_dtypes[_i];
  const uint64_t before = kite__launch_count();
  for (int k = 0;; k++) {
    const void *x = FX, *w = FW, *b = FDY;
    void *y = FY;
    float *mean = FLSE, eps = 1e-5f;
    int64_t ldy = 1024;
    const char *desc;
    switch (k) {
    case 0: desc = "x NULL"; x = NULL; break;
    case 1: desc = "w NULL"; w = NULL; break;
    case 2: desc = "b one byte off"; b = cpy(FDY, 1); break;
    case 3: desc = "mean 2 bytes off"; mean = (float *)cpy(FLSE, 2); break;
    case 4: desc = "eps negative"; eps = -1.f; break;
    case 5: desc = "ldy = N - 1"; ldy = 999; break;
    case 6: desc = "y one element into x"; y = cpy(FX, kt_dtype_size(dt)); break;
    default: desc = NULL;
    }
    if (!desc) break;
    kite__fail(KITE_OK, "%s", "");
    const kite_status s = kite_layernorm_fwd(dt, 4, 1000, x, 1024, w, b, eps, y, ldy, mean, FRSTD, 0);
    ck_assert_msg(s == KITE_ERR_INVALID_ARG, "layernorm %s, %s: got %s (%s)", kt_dtype_name(dt), desc,
                  kite_status_str(s), kite_last_error());
  }
  expect_valid_no_gpu(kite_layernorm_fwd(dt, 4, 1000, FX, 1024, FW, FDY, 1e-5f, FY, 1024, FLSE, FRSTD, 0),
                      "layernorm, a valid call");
  expect_valid_no_gpu(kite_layernorm_fwd(dt, 4, 1000, FX, 1024, FW, NULL, 1e-5f, FX, 1024, NULL, NULL, 0),
                      "layernorm in place, no b, no stats");
  KT_KITE_EXPECT(kite_layernorm_fwd(KITE_E4M3, 4, 1000, FX, 1024, FW, NULL, 1e-5f, FY, 1024, NULL, NULL, 0),
                 KITE_ERR_UNSUPPORTED);
  KT_KITE_OK(kite_layernorm_fwd(dt, 0, 1000, NULL, 0, NULL, NULL, 0.f, NULL, 0, NULL, NULL, 0));
  ck_assert_msg(kite__launch_count() == before, "layernorm launched without a GPU");
}
END_TEST

/* kite_layernorm_bwd's own checks (fake pointers; the valid calls stop at the device): what
   rmsnorm_bwd's cases do not cover, mean, db and the two-row workspace. */
#define FDB FAKE(0xc0000000)
START_TEST(layernorm_bwd_arguments)
{
  const kite_dtype dt = row_dtypes[_i];
  const uint64_t before = kite__launch_count();
  for (int k = 0;; k++) {
    const float *mean = FLSE;
    float *dw = FDW, *db = FDB;
    void *ws = FWS, *dx = FY;
    size_t wsb = (size_t)1 << 30;
    kite_status want = KITE_ERR_INVALID_ARG;
    const char *desc;
    switch (k) {
    case 0: desc = "mean NULL"; mean = NULL; break;
    case 1: desc = "mean 2 bytes off"; mean = (const float *)cpy(FLSE, 2); break;
    case 2: desc = "db 2 bytes off"; db = (float *)cpy(FDB, 2); break;
    case 3: desc = "db alone, workspace NULL"; dw = NULL; ws = NULL; break;
    case 4: desc = "db inside the workspace"; db = (float *)cpy(FWS, 64); break;
    case 5: desc = "db overlapping dw"; db = (float *)cpy(FDW, 16); break;
    case 6: desc = "db inside dx"; db = (float *)cpy(FY, 64); break;
    case 7: desc = "dx one element into x"; dx = cpy(FX, kt_dtype_size(dt)); break;
    case 8: desc = "dtype KITE_E4M3 "; want = KITE_ERR_UNSUPPORTED; break;
    default: desc = NULL;
    }
    if (!desc) break;
    kite__fail(KITE_OK, "%s", "");
    const kite_status s = kite_layernorm_bwd(k == 8 ? KITE_E4M3 : dt, 4, 1000, FX, 1024, FW, mean, FRSTD, FDY, 1024, dx,
                                             1024, dw, db, ws, wsb, 0);
    ck_assert_msg(s == want, "layernorm_bwd %s, %s: got %s (%s)", kt_dtype_name(dt), desc, kite_status_str(s),
                  kite_last_error());
    ck_assert_msg(kite_last_error()[0] != '\0', "%s: no text", desc);
  }
  expect_valid_no_gpu(kite_layernorm_bwd(dt, 4, 1000, FX, 1024, FW, FLSE, FRSTD, FDY, 1024, FY, 1024, FDW, FDB, FWS,
                                         (size_t)1 << 30, 0), "layernorm_bwd, a valid call");
  expect_valid_no_gpu(kite_layernorm_bwd(dt, 4, 1000, FX, 1024, FW, FLSE, FRSTD, FDY, 1024, FX, 1024, NULL, NULL,
                                         NULL, 0, 0), "layernorm_bwd in place, no sums");
  KT_KITE_OK(kite_layernorm_bwd(dt, 0, 1000, NULL, 0, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL, NULL, NULL, 0, 0));
  size_t bytes = 1;
  KT_KITE_EXPECT(kite_layernorm_bwd_workspace(-1, 10, &bytes), KITE_ERR_INVALID_ARG);
  KT_KITE_OK(kite_layernorm_bwd_workspace(0, 10, &bytes));
  ck_assert_msg(bytes == 0, "an empty problem's workspace: %zu bytes", bytes);
  ck_assert_msg(kite_layernorm_bwd_workspace(10, 10, &bytes) == KITE_ERR_CUDA, "the workspace without a GPU");
  ck_assert_msg(kite__launch_count() == before, "layernorm_bwd launched without a GPU");
}
END_TEST

/* Every N from 1 to ROW_N_MAX has an rmsnorm_bwd, an rmsnorm_res, a layernorm and a layernorm_bwd
   variant, for element-aligned and 16-byte-aligned data. */
START_TEST(rmsnorm_bwd_covers_every_n)
{
  static const char *const ops[] = { "rmsnorm_bwd", "rmsnorm_res", "layernorm", "layernorm_bwd" };
  const char *op = ops[_i];
  for (int d = 0; d < 3; d++)
    for (int32_t align = kt_dtype_size(row_dtypes[d]); align <= 16; align *= 2) {
      int64_t n = 1;
      while (n <= ROW_N_MAX) {
        const struct kite_variant *v = kite__pick(op, row_dtypes[d], n, align, NULL);
        ck_assert_msg(v != NULL, "%s %s, %d-byte alignment: no variant for N=%lld", op,
                      kt_dtype_name(row_dtypes[d]), (int)align, (long long)n);
        n = v->n_max + 1;
      }
    }
}
END_TEST


int main(void)
{
  /* Before anything starts CUDA (Check forks each test; the children inherit it). */
  setenv("CUDA_VISIBLE_DEVICES", "-1", 1);
  kt_seed();
  Suite *s = suite_create("runtime");
  TCase *tc = tcase_create("status");
  tcase_add_test(tc, status_str_names_every_code);
  tcase_add_test(tc, last_error_is_set_and_per_thread);
  suite_add_tcase(s, tc);

  tc = tcase_create("validation");
  tcase_add_loop_test(tc, row_op_invalid_arguments, 0, OP_COUNT * 3);
  tcase_add_loop_test(tc, row_op_valid_arguments_reach_the_device_check, 0, OP_COUNT * 3);
  tcase_add_loop_test(tc, row_op_empty_problems_launch_nothing, 0, OP_COUNT * 3);
  tcase_add_test(tc, gemm_invalid_arguments);
  tcase_add_test(tc, gemm_valid_arguments_reach_the_device_check);
  tcase_add_test(tc, gemm_variant_alignment);
  tcase_add_test(tc, gemm_empty_products_launch_nothing);
  tcase_add_loop_test(tc, rmsnorm_bwd_arguments, 0, 3);
  tcase_add_loop_test(tc, rmsnorm_bwd_covers_every_n, 0, 4);
  tcase_add_loop_test(tc, layernorm_bwd_arguments, 0, 3);
  tcase_add_loop_test(tc, rmsnorm_residual_arguments, 0, 3);
  tcase_add_loop_test(tc, layernorm_arguments, 0, 3);
  suite_add_tcase(s, tc);

  tc = tcase_create("gemm_dispatch");
  tcase_add_test(tc, gemm_pick_filters_dtype_and_alignment);
  tcase_add_test(tc, gemm_pick_heuristic_choices);
  tcase_add_test(tc, gemm_pick_is_deterministic);
  tcase_add_test(tc, gemm_explain);
  tcase_add_test(tc, gemm_choice_memo);
  tcase_add_test(tc, tmap_refuses_bad_arguments);
  tcase_add_test(tc, device_sms_without_a_device);
  suite_add_tcase(s, tc);

  tc = tcase_create("variants");
  tcase_add_test(tc, variant_table_rows_are_sane);
  tcase_add_test(tc, variant_get_bounds);
  tcase_add_test(tc, variant_ranges_cover_every_n);
  tcase_add_test(tc, run_variant_arguments);
  tcase_add_test(tc, run_variant_range_and_alignment);
  suite_add_tcase(s, tc);

  tc = tcase_create("dispatch");
  tcase_add_loop_test(tc, dispatch_picks_lowest_rank_then_tightest_range, 0, OP_COUNT * 3);
  tcase_add_test(tc, dispatch_facts_of_the_committed_space);
  tcase_add_test(tc, heuristic_never_picks_tuned_only_variants);
  tcase_add_test(tc, three_access_rows_fill_a_chunk_of_one_and_a_half_powers);
  tcase_add_test(tc, odd_stride_dispatches_to_the_element_wise_variant);
  tcase_add_test(tc, align_of_is_the_lowest_common_power_of_two);
  tcase_add_test(tc, explain_arguments);
  suite_add_tcase(s, tc);

  tc = tcase_create("rules");
  tcase_add_test(tc, rule_nearest_bucket);
  tcase_add_test(tc, rule_constraints_filter);
  tcase_add_test(tc, span_find);
  tcase_add_loop_test(tc, span_table, 0, kite_gpu_tables_len);
  tcase_add_test(tc, gpu_sets_by_device_name);
  tcase_add_test(tc, rule_gemm_buckets);
  tcase_add_loop_test(tc, committed_rules_are_consistent, 0, kite_gpu_tables_len);
  tcase_add_loop_test(tc, gemm_rule_reach, 0, kite_gpu_tables_len);
  tcase_add_test(tc, gemm_model_pick);
  tcase_add_loop_test(tc, op_range_matches_the_table, 0, kite_gpu_tables_len);
  tcase_add_test(tc, rule_lookup_cost);
  suite_add_tcase(s, tc);
  tc = tcase_create("helpers");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, helper_conversions_known_values);
  tcase_add_test(tc, helper_conversions_round_trip_and_round_to_nearest);
  tcase_add_test(tc, no_gpu_is_visible);
  suite_add_tcase(s, tc);

  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
