/* test_gemm.c - kite's GEMM on a GPU: C = alpha * A * B^T + beta * C against a
 * float64 reference.
 *
 * Without a usable sm_90 device it prints one line,
 *     KITE_SKIPPED: <number of cases> (no CUDA device: <reason>)
 * and exits 0 without running a case.  Otherwise (Check, CK_NOFORK: CUDA and
 * fork do not mix):
 *   variants   every table variant of op "gemm", through kite_run_variant,
 *              over the shapes below; 16-byte variants with strides rounded
 *              up to 8 elements, alignment-free ones with those and with odd
 *              strides and one-element offsets too
 *   entry      kite_gemm for each (A/B, C) dtype pair over the same shapes,
 *              aligned, with A one element in (only an alignment-free kind
 *              fits), and all odd; a pair with no variant at all is counted
 *              skipped (KITE_SKIPPED), not passed
 *   final      no CUDA error left behind
 * Every run: A and B random in [-1, 1], C poisoned (NaN) first, or random
 * for the beta != 0 shape; then the relative Frobenius error of the M x N
 * tile, no NaN/Inf in it, no element far off, C's padding, the bytes before
 * it and a guard after it untouched, A and B unchanged, and a second run
 * byte-identical.  Data, reference and checks live on the device
 * (kt_gemm_ref.cu); the reference of a (shape, A/B dtype) is computed once
 * and kept for every variant, layout and C dtype that runs it.  One line per
 * variant or pair goes to stdout. */
#define _POSIX_C_SOURCE 200809L
#include "kite_test.h"

#include <fnmatch.h>

#include "kite_internal.h"
#include "kt_gemm_ref.h"

#define GUARD 256   /* elements of poison after every matrix */

typedef struct shape {
  int64_t M, N, K;
  double alpha, beta;
} shape;

/* Edges in every dimension, a skinny M, a long K; the one with beta != 0
   reads a random C. */
static const shape shapes[] = {
  { 1, 1, 1, 1.0, 0.0 },
  { 7, 13, 5, 1.0, 0.0 },
  { 129, 257, 65, 1.0, 0.0 },
  { 129, 257, 65, 1.5, 0.5 },
  { 1000, 1000, 1000, -0.75, 0.0 },
  { 4097, 4095, 4104, 1.0, 0.0 },
  { 16, 4096, 4096, 1.0, 0.0 },
  { 256, 256, 16384, 1.0, 0.0 },
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))
#define NSMALL 5   /* shapes up to 1000^3: what KITE_GEMM_SMALL keeps */

/* Triage on a first device run: KITE_GEMM_SMALL=1 keeps the small shapes,
   KITE_TEST_ONLY=<glob> the variants it names (and drops the entry cases),
   so a script can run every variant in its own process under a time limit. */
static int nshapes(void)
{
  const char *e = getenv("KITE_GEMM_SMALL");
  return e && *e && strcmp(e, "0") != 0 ? NSMALL : NSHAPES;
}

static const kite_dtype ab_types[2] = { KITE_BF16, KITE_F16 };
static const kite_dtype c_types[3] = { KITE_BF16, KITE_F16, KITE_F32 };
#define NPAIRS 6

/* ---- tolerances ------------------------------------------------------------------- */

/* ||C - want||_F <= fro_tol * ||want||_F + atol * sqrt(M N).  bf16 output
   rounding alone costs about 2e-3 of the norm (4e-3 at worst per element);
   f32 accumulation far less. */
static double fro_tol(kite_dtype ab) { return ab == KITE_BF16 ? 1e-2 : 5e-3; }
/* Every element: |C - want| <= ELEM_TOL * max(|want|, rms(want)) + atol.  Five
   times bf16's rounding, so only a wrong element (a tile edge, a dropped
   K step) trips it, which the norm over millions of elements would hide. */
#define ELEM_TOL 2e-2

/* ---- one problem ------------------------------------------------------------------ */

enum { L_ALIGNED, L_A_OFF, L_ODD, L_COUNT };
static const char *const layout_names[L_COUNT] = { "aligned", "A+1", "odd" };

typedef struct gcase {
  kite_dtype ab, c;
  const char *variant;   /* NULL: kite_gemm */
  cudaStream_t stream;
  shape s;
  int layout, pad;       /* pad: 8 more elements of row padding in A and B */
  kt_mat a, b, cm;
  uint64_t seed_a, seed_b, seed_c;   /* seed_c 0: C poisoned (beta is 0) */
  unsigned char *ad, *bd, *cd, *cd2; /* allocations; cd2: the first run's C */
} gcase;

typedef struct gstats {
  double worst_fro, worst_elem;   /* fractions of their tolerances */
  char worst_where[96];
  int runs;
} gstats;

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* Every case starts here: after a kernel fault the CUDA context is dead, and
   the cases after it say so instead of failing in some later call. */
static void context_ok(void)
{
  const cudaError_t e = cudaDeviceSynchronize();
  ck_assert_msg(e == cudaSuccess, "not run: the CUDA context is broken by an earlier case (%s: %s)",
                cudaGetErrorName(e), cudaGetErrorString(e));
}

static kt_mat mat(kite_dtype dt, int64_t rows, int64_t cols, int64_t ld, int64_t off)
{
  kt_mat m = { dt, rows, cols, ld, off, off + (rows - 1) * ld + cols + GUARD };
  return m;
}

/* The data of a (shape, A/B dtype) depends on nothing else, so that its
   reference serves every variant, layout and C dtype. */
static void gc_seeds(gcase *g)
{
  char tag[96];
  snprintf(tag, sizeof tag, "gemm %lldx%lldx%lld %s", (long long)g->s.M, (long long)g->s.N, (long long)g->s.K,
           kt_dtype_name(g->ab));
  kt_rng r = kt_rng_for(tag, 0);
  g->seed_a = kt_u64(&r) | 1;   /* never 0, which means poison */
  g->seed_b = kt_u64(&r) | 1;
  g->seed_c = g->s.beta != 0 ? kt_u64(&r) | 1 : 0;
}

/* Aligned: lda, ldb rounded up to 8 elements (16 bytes), ldc padded past N,
   every base 256-byte aligned (cudaMalloc's).  A+1: the same with A one
   element in.  Odd: odd strides, every base one element in. */
static void gc_layout(gcase *g)
{
  const int64_t M = g->s.M, N = g->s.N, K = g->s.K;
  const int64_t extra = g->pad ? 8 : 0;
  if (g->layout == L_ODD) {
    g->a = mat(g->ab, M, K, K + 1, 1);
    g->b = mat(g->ab, N, K, K + 3, 1);
    g->cm = mat(g->c, M, N, N + 1, 1);
  } else {
    g->a = mat(g->ab, M, K, round_up(K, 8) + extra, g->layout == L_A_OFF ? 1 : 0);
    g->b = mat(g->ab, N, K, round_up(K, 8) + extra, 0);
    g->cm = mat(g->c, M, N, round_up(N, 8) + 8, 0);
  }
}

static size_t mat_bytes(const kt_mat *m) { return (size_t)m->len * (size_t)kt_dtype_size(m->dt); }

static void *mat_ptr(const kt_mat *m, unsigned char *base) { return base + m->off * kt_dtype_size(m->dt); }

static const char *gc_name(const gcase *g, char *buf, size_t len)
{
  snprintf(buf, len, "gemm %s/%s M=%lld N=%lld K=%lld alpha=%g beta=%g lda=%lld ldb=%lld ldc=%lld %s via %s",
           kt_dtype_name(g->ab), kt_dtype_name(g->c), (long long)g->s.M, (long long)g->s.N, (long long)g->s.K,
           g->s.alpha, g->s.beta, (long long)g->a.ld, (long long)g->b.ld, (long long)g->cm.ld,
           layout_names[g->layout], g->variant ? g->variant : "kite_gemm");
  return buf;
}

/* C as it is before each run: poison, or C0 for beta != 0. */
static void gc_reset_c(const gcase *g)
{
  KT_CUDA_CHECK(kt_dev_fill(&g->cm, g->cd, g->seed_c));
}

static void gc_fill(gcase *g)
{
  gc_seeds(g);
  gc_layout(g);
  g->ad = kt_dalloc(mat_bytes(&g->a));
  g->bd = kt_dalloc(mat_bytes(&g->b));
  g->cd = kt_dalloc(mat_bytes(&g->cm));
  g->cd2 = kt_dalloc(mat_bytes(&g->cm));
  KT_CUDA_CHECK(kt_dev_fill(&g->a, g->ad, g->seed_a));
  KT_CUDA_CHECK(kt_dev_fill(&g->b, g->bd, g->seed_b));
  gc_reset_c(g);
}

/* ---- the reference, once per (shape, A/B dtype, data) ------------------------------ */

/* P = A * B^T in float64 on the device; the largest costs a noticeable part
   of a second, and every variant runs it with the same data.  Kept outside
   kt_dalloc (which a test's teardown frees) until the end of the run. */
typedef struct ref_entry {
  int64_t M, N, K;
  kite_dtype ab;
  uint64_t seed_a, seed_b;
  double *p;
} ref_entry;

#define REF_SLOTS 32
static ref_entry refs[REF_SLOTS];
static int nrefs, refs_made, refs_reused;

static void ref_drop_oldest(void)
{
  cudaFree(refs[0].p);
  memmove(&refs[0], &refs[1], (size_t)(nrefs - 1) * sizeof refs[0]);
  nrefs--;
}

static const double *ref_for(const gcase *g)
{
  for (int i = 0; i < nrefs; i++) {
    const ref_entry *e = &refs[i];
    if (e->M == g->s.M && e->N == g->s.N && e->K == g->s.K && e->ab == g->ab && e->seed_a == g->seed_a &&
        e->seed_b == g->seed_b) {
      refs_reused++;
      return e->p;
    }
  }
  if (nrefs == REF_SLOTS) ref_drop_oldest();
  ref_entry e = { g->s.M, g->s.N, g->s.K, g->ab, g->seed_a, g->seed_b, NULL };
  KT_CUDA_CHECK(cudaMalloc((void **)&e.p, (size_t)(e.M * e.N) * sizeof(double)));
  const cudaError_t err = kt_dev_gemm_ref(g->ab, e.M, e.N, e.K, mat_ptr(&g->a, g->ad), g->a.ld,
                                          mat_ptr(&g->b, g->bd), g->b.ld, e.p);
  if (err != cudaSuccess) cudaFree(e.p);
  KT_CUDA_CHECK(err);
  refs[nrefs++] = e;
  refs_made++;
  return e.p;
}

static void ref_free_all(void)
{
  while (nrefs > 0) ref_drop_oldest();
}

/* ---- run and check ---------------------------------------------------------------- */

static kite_status gc_call(const gcase *g)
{
  void *C = mat_ptr(&g->cm, g->cd);
  const void *A = mat_ptr(&g->a, g->ad), *B = mat_ptr(&g->b, g->bd);
  if (!g->variant)
    return kite_gemm(g->ab, g->c, g->s.M, g->s.N, g->s.K, (float)g->s.alpha, A, g->a.ld, B, g->b.ld,
                     (float)g->s.beta, C, g->cm.ld, g->stream);
  const kite_gemm_args a = { .M = g->s.M, .N = g->s.N, .K = g->s.K, .alpha = (float)g->s.alpha,
                             .beta = (float)g->s.beta, .A = A, .lda = g->a.ld, .B = B, .ldb = g->b.ld,
                             .C = C, .ldc = g->cm.ld };
  /* through const void *: kite_run_variant takes the op's argument struct */
  const void *args = &a;
  return kite_run_variant(g->variant, args, g->stream);
}

static void gc_run(const gcase *g)
{
  char where[320];
  /* the data was written on the legacy default stream, which a non-blocking
     stream does not wait for */
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  const uint64_t before = kite__launch_count();
  const kite_status s = gc_call(g);
  ck_assert_msg(s == KITE_OK, "%s: %s (%s)", gc_name(g, where, sizeof where), kite_status_str(s), kite_last_error());
  ck_assert_msg(kite__launch_count() > before, "%s: KITE_OK but no launch counted", where);
  KT_CUDA_CHECK(cudaStreamSynchronize(g->stream));
  KT_CUDA_CHECK(cudaGetLastError());
}

static void expect_unchanged(const kt_mat *m, const unsigned char *base, uint64_t seed, int outside_only,
                             const char *what, const char *where)
{
  kt_count n;
  KT_CUDA_CHECK(kt_dev_changed(m, base, seed, outside_only, &n));
  ck_assert_msg(n.n == 0, "%s: %llu elements of %s changed, the first at element %lld of the allocation "
                "(the matrix starts at %lld, rows of %lld)", where, n.n, what, n.first, (long long)m->off,
                (long long)m->ld);
}

/* The tile against alpha * P + beta * C0; everything else as it was. */
static void gc_check(const gcase *g, const double *p, gstats *st)
{
  char where[320];
  gc_name(g, where, sizeof where);
  const int64_t M = g->s.M, N = g->s.N;
  expect_unchanged(&g->a, g->ad, g->seed_a, 0, "A", where);
  expect_unchanged(&g->b, g->bd, g->seed_b, 0, "B", where);
  expect_unchanged(&g->cm, g->cd, g->seed_c, 1, "C outside the M x N tile (padding, guard)", where);

  kt_gemm_err e;
  KT_CUDA_CHECK(kt_dev_gemm_err(&g->cm, g->cd, p, g->s.alpha, g->s.beta, g->seed_c, 0, 0, &e));
  ck_assert_msg(e.nonfinite == 0, "%s: %llu elements NaN or Inf, the first C[%lld][%lld]%s", where, e.nonfinite,
                e.first_nonfinite / N, e.first_nonfinite % N, g->seed_c ? "" : " (C was NaN before: not written?)");
  const double atol = kt_out_atol(g->c), mn = (double)M * (double)N;
  const double fro = sqrt(e.err2), ref = sqrt(e.want2);
  const double fro_ratio = fro / (fro_tol(g->ab) * ref + atol * sqrt(mn));
  ck_assert_msg(fro_ratio <= 1.0, "%s: ||C - ref||_F / ||ref||_F = %.3g, tolerance %.3g", where,
                ref > 0 ? fro / ref : fro, fro_tol(g->ab));

  const double rms = ref / sqrt(mn);
  KT_CUDA_CHECK(kt_dev_gemm_err(&g->cm, g->cd, p, g->s.alpha, g->s.beta, g->seed_c, rms > 0 ? rms : 1e-300,
                                atol / ELEM_TOL, &e));
  ck_assert_msg(e.worst <= ELEM_TOL, "%s: C[%lld][%lld] = %.9g, want %.9g (error %.3g of max(|want|, rms %.3g); "
                "tolerance %.3g)", where, e.worst_at / N, e.worst_at % N, e.worst_got, e.worst_want, e.worst, rms,
                ELEM_TOL);

  st->runs++;
  if (fro_ratio > st->worst_fro) {
    st->worst_fro = fro_ratio;
    snprintf(st->worst_where, sizeof st->worst_where, "rel err %.2e at %lldx%lldx%lld %s", ref > 0 ? fro / ref : fro,
             (long long)M, (long long)N, (long long)g->s.K, layout_names[g->layout]);
  }
  if (e.worst / ELEM_TOL > st->worst_elem) st->worst_elem = e.worst / ELEM_TOL;
}

/* The same call again on the same inputs: the same bytes, everywhere in C. */
static void gc_repeat(const gcase *g)
{
  char where[320];
  const size_t bytes = mat_bytes(&g->cm);
  KT_CUDA_CHECK(cudaMemcpy(g->cd2, g->cd, bytes, cudaMemcpyDeviceToDevice));
  gc_reset_c(g);
  gc_run(g);
  kt_count n;
  KT_CUDA_CHECK(kt_dev_diff_bytes(g->cd, g->cd2, bytes, &n));
  ck_assert_msg(n.n == 0, "%s: a second run gave other bytes: %llu differ, the first at byte %lld of C's allocation",
                gc_name(g, where, sizeof where), n.n, n.first);
}

/* One problem from start to end; the allocations are freed after it. */
static void gc_do(gcase *g, gstats *st)
{
  gc_fill(g);
  const double *p = ref_for(g);
  gc_run(g);
  gc_check(g, p, st);
  gc_repeat(g);
  kt_free_all();
}

static gcase gc_new(kite_dtype ab, kite_dtype c, const char *variant, int k, int layout)
{
  gcase g;
  memset(&g, 0, sizeof g);
  g.ab = ab;
  g.c = c;
  g.variant = variant;
  g.s = shapes[k];
  g.layout = layout;
  g.pad = k % 2;
  return g;
}

/* ---- every gemm variant ------------------------------------------------------------- */

START_TEST(variant_matches_reference)
{
  context_ok();
  kite_variant_info info;
  KT_KITE_OK(kite_variant_get((int32_t)_i, &info));
  ck_assert_str_eq(info.op, "gemm");
  fprintf(stderr, "gemm variant %s: starting\n", info.name);   /* names a kernel that hangs */
  const int any_align = info.align <= kt_dtype_size(info.dtype);
  gstats st;
  memset(&st, 0, sizeof st);
  char line[512];
  int at = snprintf(line, sizeof line, "gemm variant %-40s tile %dx%d, align %d:", info.name, (int)info.tile_m,
                    (int)info.tile_n, (int)info.align);
  int ran = 0, skipped = 0;
  for (int k = 0; k < nshapes(); k++) {
    if (shapes[k].N < info.n_min || shapes[k].N > info.n_max) {   /* outside what the variant takes */
      skipped++;
      continue;
    }
    for (int layout = L_ALIGNED; layout <= (any_align ? L_ODD : L_ALIGNED); layout++) {
      if (layout == L_A_OFF) continue;   /* the odd layout covers it */
      gcase g = gc_new(info.dtype, info.dtype_out, info.name, k, layout);
      gc_do(&g, &st);
    }
    ran++;
    if (at < (int)sizeof line)
      at += snprintf(line + at, sizeof line - (size_t)at, " %lldx%lldx%lld%s", (long long)shapes[k].M,
                     (long long)shapes[k].N, (long long)shapes[k].K, shapes[k].beta != 0 ? "(beta)" : "");
  }
  ck_assert_msg(ran > 0, "%s: N range [%lld, %lld] takes none of the test's shapes", info.name,
                (long long)info.n_min, (long long)info.n_max);
  printf("%s; %s%s, %d runs; worst %.3f of tolerance (%s), worst element %.3f\n", line,
         any_align ? "aligned+odd" : "aligned", skipped ? " (shapes outside its N range left out)" : "", st.runs,
         st.worst_fro, st.worst_where, st.worst_elem);
  fflush(stdout);
}
END_TEST

/* ---- the entry point ---------------------------------------------------------------- */

static int have_variants(kite_dtype ab, kite_dtype c)
{
  for (int32_t i = 0; i < kite_variant_count(); i++) {
    kite_variant_info v;
    if (kite_variant_get(i, &v) == KITE_OK && strcmp(v.op, "gemm") == 0 && v.dtype == ab && v.dtype_out == c)
      return 1;
  }
  return 0;
}

/* kite_gemm must serve every shape and layout of a dtype pair it has any
   variant for (design.md: fast paths may need alignment, the rest falls
   back to a slower correct variant).  Some calls on a non-blocking stream. */
START_TEST(entry_point_serves_every_shape)
{
  context_ok();
  const kite_dtype ab = ab_types[_i / 3], c = c_types[_i % 3];
  cudaStream_t stream;
  KT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  gstats st;
  memset(&st, 0, sizeof st);
  for (int k = 0; k < nshapes(); k++)
    for (int layout = 0; layout < L_COUNT; layout++) {
      gcase g = gc_new(ab, c, NULL, k, layout);
      g.stream = (k + layout) % 2 ? stream : 0;
      gc_do(&g, &st);
    }
  KT_CUDA_CHECK(cudaStreamDestroy(stream));
  printf("gemm entry %s/%s: %d shapes x aligned, A+1, odd; %d runs; worst %.3f of tolerance (%s), "
         "worst element %.3f\n", kt_dtype_name(ab), kt_dtype_name(c), nshapes(), st.runs, st.worst_fro,
         st.worst_where, st.worst_elem);
  fflush(stdout);
}
END_TEST

/* ---- the tuned table (bench/tuned/<gpu>.tsv) --------------------------------------------- */

/* Tuned gemm rule _i of the device's measured set: kite_gemm at the rule's own shape takes the rule's
   variant (kite_explain says so) and gets the reference's answer. */
START_TEST(tuned_rule_is_correct)
{
  context_ok();
  const struct kite_rule *rule = &kite__table(NULL)->rules[_i];
  const char *name = kite_variants[rule->variant].name;
  char buf[1024];
  KT_KITE_OK(kite_explain("gemm", rule->dtype, rule->m, rule->n, rule->k, buf, sizeof buf));
  ck_assert_msg(strstr(buf, name) && strstr(buf, "tuned rule"), "rule %d (%lldx%lldx%lld) wants %s; explain: %s",
                _i, (long long)rule->m, (long long)rule->n, (long long)rule->k, name, buf);
  gstats st;
  memset(&st, 0, sizeof st);
  gcase g = gc_new(rule->dtype, rule->dtype_out, NULL, 0, L_ALIGNED);
  g.s = (shape){ rule->m, rule->n, rule->k, 1.0, 0.0 };
  gc_do(&g, &st);
  ref_free_all();   /* each rule has its own shape: nothing to reuse, up to 2 GiB to keep */
  printf("gemm tuned rule %lldx%lldx%lld -> %s: worst %.3f of tolerance\n", (long long)rule->m, (long long)rule->n,
         (long long)rule->k, name, st.worst_fro);
  fflush(stdout);
}
END_TEST

/* ---- the end --------------------------------------------------------------------------- */

START_TEST(no_cuda_error_left)
{
  KT_CUDA_CHECK(cudaDeviceSynchronize());
  KT_CUDA_CHECK(cudaGetLastError());
  KT_CUDA_CHECK(cudaPeekAtLastError());
  printf("gemm references: %d computed, %d reused\n", refs_made, refs_reused);
  fflush(stdout);
}
END_TEST



int main(void)
{
  Suite *s = suite_create("gemm");
  TCase *tc = kt_gpu_tcase(s, "variants");
  const char *only = getenv("KITE_TEST_ONLY");
  for (int32_t i = 0; i < kite_variant_count(); i++) {
    kite_variant_info info;
    if (kite_variant_get(i, &info) == KITE_OK && strcmp(info.op, "gemm") == 0 &&
        (!only || fnmatch(only, info.name, 0) == 0))
      KT_ADD_LOOP(tc, variant_matches_reference, i, i + 1);
  }
  /* A dtype pair without variants has nothing to test: counted skipped, with
     its name, rather than passed. */
  char missing[256] = "";
  int nmissing = 0;
  tc = kt_gpu_tcase(s, "entry");
  for (int i = 0; i < NPAIRS; i++) {
    const kite_dtype ab = ab_types[i / 3], c = c_types[i % 3];
    if (only) break;
    if (have_variants(ab, c)) {
      KT_ADD_LOOP(tc, entry_point_serves_every_shape, i, i + 1);
      continue;
    }
    const size_t at = strlen(missing);
    snprintf(missing + at, sizeof missing - at, "%s%s/%s", nmissing ? ", " : "", kt_dtype_name(ab),
             kt_dtype_name(c));
    nmissing++;
  }
  /* every gemm rule of the device's measured set (none without a tuned tsv) */
  tc = NULL;
  const struct kite_gpu_table *t = kite__table(NULL);
  for (int32_t i = 0; i < t->rules_len && !only; i++) {
    if (strcmp(t->rules[i].op, "gemm") != 0 || t->rules[i].dtype_out != t->rules[i].dtype) continue;
    if (!tc) tc = kt_gpu_tcase(s, "tuned");
    KT_ADD_LOOP(tc, tuned_rule_is_correct, i, i + 1);
  }
  KT_ADD_LOOP(kt_gpu_tcase(s, "final"), no_cuda_error_left, 0, 1);

  char why[256];
  if (!kt_gpu_usable(why, sizeof why)) {
    printf("KITE_SKIPPED: %d (no CUDA device: %s)\n", *kt_ncases() + nmissing, why);
    srunner_free(srunner_create(s));   /* frees the suite; nothing runs */
    return EXIT_SUCCESS;
  }
  if (nmissing) printf("KITE_SKIPPED: %d (kite_gemm: no gemm variants for %s)\n", nmissing, missing);
  kt_seed();
  kt_backtrace_on_crash();
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_ENV);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  ref_free_all();
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
