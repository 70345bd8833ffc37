/* bench_gemm.c - kite_gemm against cuBLASLt, in TFLOP/s, in one run.
 *
 *   kite-bench gemm [--quick] [--variants] [--csv FILE] [--shape MxNxK]...
 *
 * The problem is kite_gemm's: C = A * B^T with A M x K, B N x K and C M x N,
 * all row-major and dense (lda = ldb = K, ldc = N), alpha = 1, beta = 0,
 * products accumulated in f32; A and B bf16 (--ab f16), C bf16 (--c f16 or
 * f32).  FLOPs counted: 2*M*N*K; TFLOP/s = 1e12 FLOP/s.
 *
 * Per shape:
 *  1. Buffer sets of A, B and C, as many as cover 3x the L2 (at least 2), used
 *     in turn by consecutive launches, so that no launch finds its operands
 *     in L2.  Values uniform in [-1, 1), copied from one random pool.
 *  2. cuBLASLt's algorithm: the top result of cublasLtMatmulAlgoGetHeuristic
 *     with a 32 MiB workspace, chosen once.
 *  3. Checks, before any timing.  cuBLASLt's C against float64 dot products
 *     on the host at 16 x 16 entries spread over C, corners included: this
 *     guards the layout mapping below.  Then kite's C, poisoned with NaN
 *     before the launch, against cuBLASLt's, every element: relative
 *     Frobenius error ||kite - cublas|| / ||cublas||; FAIL above 1e-2 or on
 *     any NaN (an element not written, or beta = 0 not honoured).
 *  4. Timing.  Every contender (cuBLASLt, kite_gemm, with --variants each
 *     variant that fits) warms up, then they take turns, one sample each per
 *     round, so that clock changes hit them alike.  A sample is one launch
 *     between two CUDA events, or for launches under 50 us a batch of them
 *     (the time divided by the batch).  The median sample is reported; 20 to
 *     50 rounds (about 0.1 s per contender), fewer for the largest shapes.
 *
 * Row-major A*B^T in cuBLAS's column-major terms.  A row-major R x C matrix
 * with row stride ld is, byte for byte, the column-major C x R matrix (its
 * transpose) with leading dimension ld.  So kite's C (M x N, ldc) is, to
 * cuBLAS, the column-major N x M matrix C^T, and
 *     C^T = (A * B^T)^T = B * A^T.
 * kite's B (N x K, ldb) is the column-major K x N matrix B^T: with op T it
 * gives B (N x K), cuBLAS's first operand.  kite's A (M x K, lda) is the
 * column-major K x M matrix A^T, cuBLAS's second operand as it is (op N).
 * Hence cublasLtMatmul with m = N, n = M, k = K, transa = T, transb = N,
 *     "A" = kite's B, layout K x N, ld = ldb
 *     "B" = kite's A, layout K x M, ld = lda
 *     "C" = "D" = kite's C, layout N x M, ld = ldc
 * the "TN" case, the one cuBLAS serves best on Hopper. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "bench_gemm.h"
#include "bench_util.h"
#include "kite.h"

#define MAX_SHAPES 192
#define TUNE_REPS 5
#define CHECK_SHAPES 30
#define WORKSPACE_BYTES ((size_t)32 << 20)
#define L2_COVER 3              /* buffer sets span this many L2s...          */
#define MIN_SETS 2              /* ...and are never fewer than this           */
#define MAX_SETS 4096
#define SET_ALIGN 256           /* cuBLASLt's heuristics assume 256-byte-aligned operands */
#define MEM_USE 0.8             /* of the free device memory, for buffer sets */
#define POOL_ELEMS 33554467u    /* random values on the device; a prime, so no two rows of A or B repeat */
#define POOL_STEP 1000003u      /* pool offset between consecutive operands */
#define VALUE_LO (-1.0f)
#define VALUE_HI 1.0f
#define POISON_BYTE 0xff        /* 0xff.. is a NaN in bf16, f16 and f32 */
#define CHECK_TOL 1e-2
#define CHECK_LINES 16          /* cuBLASLt is checked at CHECK_LINES x CHECK_LINES entries */
#define CMP_CHUNK ((size_t)16 << 20)   /* elements of C compared per host copy */
#define CMP_ROWS 1024           /* rows of C compared when tuning (every row up to this many) */
#define DEFAULT_WARMUP 10
#define QUICK_WARMUP 2
#define QUICK_REPS 10
#define MIN_REPS 20
#define MAX_REPS 50
#define TIME_BUDGET_US 1e5      /* per contender: rounds = budget / sample, within [MIN, MAX]_REPS */
#define SAMPLE_MIN_US 50.0      /* shorter launches are timed in batches: event resolution, launch gaps */
#define MAX_BATCH 64
#define TARGET_M_MIN 2048       /* the geomean: square and LLM shapes, M >= 2048,... */
#define TARGET_ALIGN 64         /* ...and M, N, K multiples of 64 (not the odd shapes) */
#define HEADLINE 8192           /* its ratio is printed on its own */

/* The suite (shared/anchors.md has cuBLAS's figures for each on the H200). */
struct gemm_shape {
  int64_t M, N, K;
  int quick;                    /* in the --quick subset */
};

static const struct gemm_shape SUITE[] = {
  { 8192, 8192, 8192, 1 },      /* square */
  { 4096, 4096, 4096, 1 },
  { 2048, 2048, 2048, 0 },
  { 16384, 4096, 4096, 0 },     /* LLM (Llama-3 8B, 16k tokens): attention projection */
  { 16384, 14336, 4096, 0 },    /* MLP up */
  { 16384, 4096, 14336, 0 },    /* MLP down */
  { 4096, 128256, 4096, 0 },    /* LM head, 128k vocabulary */
  { 8192, 8192, 1024, 0 },      /* short K */
  { 128, 4096, 4096, 1 },       /* decode-like: few rows, bound by reading B */
  { 64, 14336, 4096, 0 },
  { 16, 4096, 4096, 0 },
  { 1000, 1000, 1000, 0 },      /* odd sizes */
  { 4097, 4095, 4104, 1 },      /* N*2 bytes not a multiple of 16: the unaligned path */
};
#define N_SUITE ((int)(sizeof SUITE / sizeof SUITE[0]))

/* ---- options ------------------------------------------------------------------ */

struct gemm_opts {
  kite_dtype ab, c;
  struct gemm_shape shapes[MAX_SHAPES];
  int nshapes;
  int variants, quick, device, warmup, reps;   /* reps 0: chosen per shape */
  const char *csv;
  const char *tune;             /* --tune FILE: the tuning grid, best two variants per shape to FILE */
  const char *times;            /* --times FILE (with --tune): every checked variant's time to FILE */
  int check_dispatch;           /* --check-dispatch: random shapes, dispatched against the best variant */
  int overhead;                 /* --overhead: kite_gemm's host time from call to launch */
};

static void usage(FILE *f)
{
  fputs(
    "usage: kite-bench gemm [options]\n"
    "\n"
    "Times kite_gemm against cuBLASLt (cublasLtMatmul) in the same run: C = A * B^T,\n"
    "A M x K, B N x K, C M x N, row-major, alpha 1, beta 0, f32 accumulation.\n"
    "Each shape is checked first (kite's C against cuBLASLt's; cuBLASLt's against f64).\n"
    "  --shape MxNxK       a problem (repeatable; 2^k allowed); default: the suite\n"
    "  --quick             4 suite shapes, warm-up 2, 10 timed rounds\n"
    "  --variants          also time every gemm variant that fits each shape\n"
    "                      (kite_run_variant); '*' marks the one dispatch picks\n"
    "  --ab bf16|f16       type of A and B (default bf16)\n"
    "  --c bf16|f16|f32    type of C (default bf16)\n"
    "  --warmup W          warm-up launches per contender (default 10)\n"
    "  --reps R            timed rounds (default 20..50, by shape size)\n"
    "  --device I          CUDA device (default 0)\n"
    "  --csv FILE          append one CSV row per measurement (header if the file is new)\n"
    "  --overhead          kite_gemm's host time from its call to its kernel's launch (checks,\n"
    "                      lookup, tensor maps), median of many calls per shape\n"
    "  --check-dispatch    30 random M, N, K in [64, 16384] (log-uniform, not grid points): the\n"
    "                      dispatched variant's time over the best checked variant's, same run\n"
    "  --tune FILE         time every variant over the tuning grid (M, N, K in 64, 256, 1024,\n"
    "                      4096, 16384; in 136, 1000, 8200, rows not whole 128-byte lines; then\n"
    "                      the suite) with warm-up 2 and 5 rounds, and append\n"
    "                      the fastest two checked variants per shape to FILE (bench/tuned/<gpu>.tsv\n"
    "                      lines; `kite-bench --tune` writes its header and the row ops first)\n"
    "  --times FILE        with --tune: every checked variant's time at each shape, appended to FILE\n"
    "                      (bench/tuned/<gpu>.times.tsv: make gen fits the gemm cost model to it)\n"
    "suite: 8192^3 4096^3 2048^3 16384x4096x4096 16384x14336x4096 16384x4096x14336\n"
    "       4096x128256x4096 8192x8192x1024 128x4096x4096 64x14336x4096 16x4096x4096\n"
    "       1000^3 4097x4095x4104\n",
    f);
}

/* "MxNxK", each a number or 2^k. */
static struct gemm_shape parse_shape(const char *arg)
{
  char buf[128];
  struct gemm_shape s = { 0, 0, 0, 0 };
  int64_t *dims[3] = { &s.M, &s.N, &s.K };
  int n = 0;
  if (strlen(arg) >= sizeof buf) die("--shape '%s': too long", arg);
  strcpy(buf, arg);
  for (char *tok = strtok(buf, "xX"); tok; tok = strtok(NULL, "xX")) {
    if (n == 3) die("--shape '%s': want MxNxK", arg);
    *dims[n++] = parse_count(tok, "--shape dimension");
  }
  if (n != 3) die("--shape '%s': want MxNxK", arg);
  if (s.M > INT32_MAX || s.N > INT32_MAX || s.K > INT32_MAX) die("--shape '%s': dimensions above 2^31-1", arg);
  return s;
}

static void parse_args(struct gemm_opts *o, int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      exit(0);
    } else if (strcmp(a, "--shape") == 0) {
      if (o->nshapes == MAX_SHAPES) die("--shape: at most %d shapes", MAX_SHAPES);
      o->shapes[o->nshapes++] = parse_shape(need_arg(argc, argv, &i));
    } else if (strcmp(a, "--quick") == 0) {
      o->quick = 1;
    } else if (strcmp(a, "--variants") == 0) {
      o->variants = 1;
    } else if (strcmp(a, "--ab") == 0) {
      const char *v = need_arg(argc, argv, &i);
      if (!parse_dtype(v, &o->ab) || (o->ab != KITE_BF16 && o->ab != KITE_F16))
        die("--ab: want bf16 or f16, not '%s'", v);
    } else if (strcmp(a, "--c") == 0) {
      const char *v = need_arg(argc, argv, &i);
      if (!parse_dtype(v, &o->c) || o->c == KITE_E4M3) die("--c: want bf16, f16 or f32, not '%s'", v);
    } else if (strcmp(a, "--warmup") == 0) {
      o->warmup = parse_int(need_arg(argc, argv, &i), "--warmup", 0, 10000);
    } else if (strcmp(a, "--reps") == 0) {
      o->reps = parse_int(need_arg(argc, argv, &i), "--reps", 1, 10000);
    } else if (strcmp(a, "--device") == 0) {
      o->device = parse_int(need_arg(argc, argv, &i), "--device", 0, 1023);
    } else if (strcmp(a, "--csv") == 0) {
      o->csv = need_arg(argc, argv, &i);
    } else if (strcmp(a, "--tune") == 0) {
      o->tune = need_arg(argc, argv, &i);
    } else if (strcmp(a, "--check-dispatch") == 0) {
      o->check_dispatch = 1;
    } else if (strcmp(a, "--times") == 0) {
      o->times = need_arg(argc, argv, &i);
    } else if (strcmp(a, "--overhead") == 0) {
      o->overhead = 1;
    } else {
      fprintf(stderr, "kite-bench gemm: unknown argument '%s'\n\n", a);
      usage(stderr);
      exit(2);
    }
  }
  if (o->times && !o->tune) {
    fprintf(stderr, "kite-bench gemm: --times goes with --tune\n\n");
    usage(stderr);
    exit(2);
  }
  if (o->tune && o->nshapes == 0) {   /* the coarse log2 grid, then the suite's shapes */
    static const int64_t grid[] = { 64, 256, 1024, 4096, 16384 };
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 5; j++)
        for (int k = 0; k < 5; k++) o->shapes[o->nshapes++] = (struct gemm_shape){ grid[i], grid[j], grid[k], 0 };
    /* (not the unaligned one: its fallback variant must not win a bucket that aligned shapes share) */
    /* (and once each: a bucket has one rule) */
    /* Ragged rows (K * 2 bytes not a multiple of 128): each variant's factor
       there (gen/kg_fit.c).  Between the grid's points, multiples of 8 like
       the held-out draw, never one of its shapes. */
    static const int64_t ragged[] = { 136, 1000, 8200 };
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++)
          o->shapes[o->nshapes++] = (struct gemm_shape){ ragged[i], ragged[j], ragged[k], 0 };
    const int ngrid = o->nshapes;
    for (int i = 0; i < N_SUITE && o->nshapes < MAX_SHAPES; i++) {
      const struct gemm_shape *t = &SUITE[i];
      int dup = 0;
      for (int j = 0; j < ngrid; j++)
        dup |= o->shapes[j].M == t->M && o->shapes[j].N == t->N && o->shapes[j].K == t->K;
      if (!dup && t->N % 8 == 0 && t->K % 8 == 0) o->shapes[o->nshapes++] = *t;
    }
  }
  if (o->check_dispatch && o->nshapes == 0) {   /* held out: multiples of 8 off the power-of-two grid */
    uint64_t seed = 0xd15a7c4ULL;
    while (o->nshapes < CHECK_SHAPES) {
      int64_t d[3];
      for (int k = 0; k < 3; k++)
        d[k] = ((int64_t)log_uniform(&seed, 6.0, 14.0) + 7) / 8 * 8;
      if ((d[0] & (d[0] - 1)) == 0 && (d[1] & (d[1] - 1)) == 0 && (d[2] & (d[2] - 1)) == 0) continue;
      o->shapes[o->nshapes++] = (struct gemm_shape){ d[0], d[1], d[2], 0 };
    }
  }
  if (o->tune || o->check_dispatch) {
    o->variants = 1;
    if (o->warmup < 0) o->warmup = QUICK_WARMUP;
    if (o->reps == 0) o->reps = TUNE_REPS;
  }
  if (o->overhead) o->quick = 1;   /* the quick suite's shapes, unless given */
  if (o->nshapes == 0)
    for (int i = 0; i < N_SUITE; i++)
      if (!o->quick || SUITE[i].quick) o->shapes[o->nshapes++] = SUITE[i];
  if (o->warmup < 0) o->warmup = o->quick ? QUICK_WARMUP : DEFAULT_WARMUP;
  if (o->reps == 0 && o->quick) o->reps = QUICK_REPS;
}

/* ---- state -------------------------------------------------------------------- */

struct gemm_bench {
  struct gemm_opts o;
  struct bench_device dev;
  int esab, esc;                /* element sizes of A/B and of C */
  cudaStream_t stream;
  cublasLtHandle_t lt;
  void *workspace;              /* WORKSPACE_BYTES, for cuBLASLt */
  char *pool;                   /* POOL_ELEMS random values of type ab */
  FILE *csv;
  struct tune_run *run;         /* --tune: the supervised child's report (bench_util.h) */
  char tune_tail[512];          /* "device<TAB>date<TAB>commit" */
  int failures;
  /* for the summary: logs of kite/cuBLASLt over the target shapes */
  double log_api, log_best;
  int n_api, n_best, n_target, n_target_missing;
  double headline;              /* kite/cuBLASLt at 8192^3; 0 if not measured */
  double log_check, worst_check;   /* --check-dispatch: logs and worst of dispatched/best */
  int n_check;
  double log_named, worst_named;   /* the same, the dispatched variant run by name (no host time) */
  int n_named;
};

/* One shape's buffers and cuBLASLt plan. */
struct problem {
  int64_t M, N, K;
  char name[64];                /* "MxNxK" */
  int target;                   /* counts toward the geomean */
  int nsets, next_set;          /* next_set: shared by all contenders, so none reuses another's operands */
  size_t a_bytes, b_bytes, c_bytes;       /* one set's */
  size_t a_stride, b_stride, c_stride;    /* between sets */
  char *A, *B, *C;
  void *C_ref;                  /* cuBLASLt's C on set 0's operands */
  int has_algo;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t lay_a, lay_b, lay_c;   /* cuBLAS's names: lay_a describes kite's B */
  cublasLtMatmulAlgo_t algo;
  char algo_text[96];
};

enum who { WHO_CUBLAS, WHO_KITE, WHO_VARIANT };

/* Something timed on a shape: cuBLASLt, kite_gemm, or one variant. */
struct contender {
  enum who who;
  const char *variant;          /* WHO_VARIANT */
  int live;                     /* ran its check launch without error: timed */
  kite_status st;               /* a kite failure, KITE_OK if none */
  char why[256];                /* its kite_last_error() */
  double err;                   /* the check's relative error; NAN if none */
  double est_us;                /* per launch, from the warm-up */
  int batch, reps;
  struct timing t;
};

#define LT_CHECK(call)                                                                      \
  do {                                                                                      \
    cublasStatus_t s_ = (call);                                                             \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                        \
      die("%s:%d: %s failed: %s", __FILE__, __LINE__, #call, cublasLtGetStatusName(s_));    \
  } while (0)

static cudaDataType_t cuda_type(kite_dtype d)
{
  return d == KITE_F32 ? CUDA_R_32F : d == KITE_F16 ? CUDA_R_16F : CUDA_R_16BF;
}

static size_t round_up(size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

static double tflops(const struct problem *p, double us)
{
  return 2.0 * (double)p->M * (double)p->N * (double)p->K / us / 1e6;
}

/* ---- device setup ---------------------------------------------------------------- */

/* Copies count bytes to the host on the bench stream and waits for them. */
static void to_host(const struct gemm_bench *b, void *dst, const void *src, size_t count)
{
  CUDA_CHECK(cudaMemcpyAsync(dst, src, count, cudaMemcpyDeviceToHost, b->stream));
  CUDA_CHECK(cudaStreamSynchronize(b->stream));
}

static void setup(struct gemm_bench *b)
{
  bench_open_device(b->o.device, &b->dev);
  CUDA_CHECK(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
  LT_CHECK(cublasLtCreate(&b->lt));
  CUDA_CHECK(cudaMalloc(&b->workspace, WORKSPACE_BYTES));
  size_t pool_bytes = (size_t)POOL_ELEMS * (size_t)b->esab;
  void *h = xmalloc(pool_bytes);
  fill_random(h, POOL_ELEMS, b->o.ab, VALUE_LO, VALUE_HI, 3);
  CUDA_CHECK(cudaMalloc((void **)&b->pool, pool_bytes));
  CUDA_CHECK(cudaMemcpy(b->pool, h, pool_bytes, cudaMemcpyHostToDevice));
  free(h);
}

static void teardown(struct gemm_bench *b)
{
  CUDA_CHECK(cudaFree(b->pool));
  CUDA_CHECK(cudaFree(b->workspace));
  LT_CHECK(cublasLtDestroy(b->lt));
  CUDA_CHECK(cudaStreamDestroy(b->stream));
}

/* n elements of the pool, from element `start` on (wrapping), to dst. */
static void fill_from_pool(const struct gemm_bench *b, char *dst, size_t n, size_t start)
{
  size_t es = (size_t)b->esab, off = start % POOL_ELEMS;
  for (size_t done = 0; done < n; off = 0) {
    size_t k = n - done < POOL_ELEMS - off ? n - done : POOL_ELEMS - off;
    CUDA_CHECK(cudaMemcpyAsync(dst + done * es, b->pool + off * es, k * es, cudaMemcpyDeviceToDevice, b->stream));
    done += k;
  }
}

/* ---- one shape's buffers ------------------------------------------------------------ */

static int is_target(const struct gemm_shape *s)
{
  return s->M >= TARGET_M_MIN && s->M % TARGET_ALIGN == 0 && s->N % TARGET_ALIGN == 0 &&
         s->K % TARGET_ALIGN == 0;
}

/* How many buffer sets: enough to cover L2_COVER x L2, at least MIN_SETS,
   as memory allows; 0 when not even one set fits. */
static int count_sets(const struct gemm_bench *b, const struct problem *p)
{
  size_t set = p->a_stride + p->b_stride + p->c_stride;
  size_t want = L2_COVER * b->dev.l2 / set + 1;
  if (want < MIN_SETS) want = MIN_SETS;
  if (want > MAX_SETS) want = MAX_SETS;
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  double budget = (double)free_b * MEM_USE - (double)p->c_bytes;   /* C_ref comes out of it too */
  size_t fit = budget > 0 ? (size_t)(budget / (double)set) : 0;
  if (fit < want && fit > 0)
    fprintf(stderr, "kite-bench: warning: %s: memory allows %zu buffer sets, not the %zu wanted\n", p->name,
            fit, want);
  return (int)(fit < want ? fit : want);
}

/* Allocates and fills p's buffer sets; 0 if the device lacks the memory. */
static int problem_alloc(struct gemm_bench *b, struct problem *p)
{
  p->a_bytes = (size_t)p->M * (size_t)p->K * (size_t)b->esab;
  p->b_bytes = (size_t)p->N * (size_t)p->K * (size_t)b->esab;
  p->c_bytes = (size_t)p->M * (size_t)p->N * (size_t)b->esc;
  p->a_stride = round_up(p->a_bytes, SET_ALIGN);
  p->b_stride = round_up(p->b_bytes, SET_ALIGN);
  p->c_stride = round_up(p->c_bytes, SET_ALIGN);
  p->nsets = count_sets(b, p);
  if (p->nsets == 0) return 0;
  size_t ns = (size_t)p->nsets;
  CUDA_CHECK(cudaMalloc((void **)&p->A, ns * p->a_stride));
  CUDA_CHECK(cudaMalloc((void **)&p->B, ns * p->b_stride));
  CUDA_CHECK(cudaMalloc((void **)&p->C, ns * p->c_stride));
  CUDA_CHECK(cudaMalloc(&p->C_ref, p->c_bytes));
  for (size_t s = 0; s < ns; s++) {
    fill_from_pool(b, p->A + s * p->a_stride, (size_t)p->M * (size_t)p->K, (2 * s) * POOL_STEP);
    fill_from_pool(b, p->B + s * p->b_stride, (size_t)p->N * (size_t)p->K, (2 * s + 1) * POOL_STEP);
  }
  CUDA_CHECK(cudaMemsetAsync(p->C, 0, ns * p->c_stride, b->stream));
  CUDA_CHECK(cudaStreamSynchronize(b->stream));
  return 1;
}

static void problem_free(struct problem *p)
{
  if (p->desc) {
    LT_CHECK(cublasLtMatrixLayoutDestroy(p->lay_a));
    LT_CHECK(cublasLtMatrixLayoutDestroy(p->lay_b));
    LT_CHECK(cublasLtMatrixLayoutDestroy(p->lay_c));
    LT_CHECK(cublasLtMatmulDescDestroy(p->desc));
  }
  if (p->A) {
    CUDA_CHECK(cudaFree(p->A));
    CUDA_CHECK(cudaFree(p->B));
    CUDA_CHECK(cudaFree(p->C));
    CUDA_CHECK(cudaFree(p->C_ref));
  }
}

/* ---- cuBLASLt ------------------------------------------------------------------------ */

static void describe_algo(const cublasLtMatmulAlgo_t *a, char *out, size_t len)
{
  int32_t id = -1, splitk = -1;
  uint32_t tile = 0, stages = 0;
  uint16_t cluster = 0;
  size_t w;
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &w);
  snprintf(out, len, "cublasLt algo %d tile %u stages %u splitk %d cluster %u", (int)id, (unsigned)tile,
           (unsigned)stages, (int)splitk, (unsigned)cluster);
}

/* The layouts of the mapping at the top of this file, and the heuristic's
   top algorithm; p->has_algo = 0 (with a message) when there is none. */
static void plan_cublas(struct gemm_bench *b, struct problem *p)
{
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  uint64_t ws = WORKSPACE_BYTES;
  LT_CHECK(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  LT_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  LT_CHECK(cublasLtMatrixLayoutCreate(&p->lay_a, cuda_type(b->o.ab), (uint64_t)p->K, (uint64_t)p->N, p->K));
  LT_CHECK(cublasLtMatrixLayoutCreate(&p->lay_b, cuda_type(b->o.ab), (uint64_t)p->K, (uint64_t)p->M, p->K));
  LT_CHECK(cublasLtMatrixLayoutCreate(&p->lay_c, cuda_type(b->o.c), (uint64_t)p->N, (uint64_t)p->M, p->N));

  cublasLtMatmulPreference_t pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t r;
  int n = 0;
  memset(&r, 0, sizeof r);
  cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(b->lt, p->desc, p->lay_a, p->lay_b, p->lay_c, p->lay_c, pref,
                                                    1, &r, &n);
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  p->has_algo = s == CUBLAS_STATUS_SUCCESS && n > 0 && r.state == CUBLAS_STATUS_SUCCESS;
  if (!p->has_algo) {
    printf("# %s: cuBLASLt has no algorithm (%s)\n", p->name,
           cublasLtGetStatusName(s != CUBLAS_STATUS_SUCCESS ? s : r.state));
    b->failures++;
    return;
  }
  p->algo = r.algo;
  describe_algo(&p->algo, p->algo_text, sizeof p->algo_text);
}

/* C = A * B^T on the given operands, through cuBLASLt (the mapping above). */
static void cublas_gemm(const struct gemm_bench *b, const struct problem *p, const void *A, const void *B,
                        void *C)
{
  const float one = 1.0f, zero = 0.0f;
  LT_CHECK(cublasLtMatmul(b->lt, p->desc, &one, B, p->lay_a, A, p->lay_b, &zero, C, p->lay_c, C, p->lay_c,
                          &p->algo, b->workspace, WORKSPACE_BYTES, b->stream));
}

/* ---- launching -------------------------------------------------------------------- */

/* One launch of contender k on buffer set `set`. */
static kite_status launch(const struct gemm_bench *b, const struct problem *p, const struct contender *k, int set)
{
  const char *A = p->A + (size_t)set * p->a_stride, *B = p->B + (size_t)set * p->b_stride;
  char *C = p->C + (size_t)set * p->c_stride;
  if (k->who == WHO_CUBLAS) {
    cublas_gemm(b, p, A, B, C);
    return KITE_OK;
  }
  if (k->who == WHO_KITE)
    return kite_gemm(b->o.ab, b->o.c, p->M, p->N, p->K, 1.0f, A, p->K, B, p->K, 0.0f, C, p->N, b->stream);
  kite_gemm_args g = { .M = p->M, .N = p->N, .K = p->K, .alpha = 1.0f, .beta = 0.0f,
                       .A = A, .lda = p->K, .B = B, .ldb = p->K, .C = C, .ldc = p->N };
  /* Through const void *: kite_run_variant takes the op's own argument struct. */
  return kite_run_variant(k->variant, (const void *)&g, b->stream);
}

static const char *label(const struct contender *k)
{
  return k->who == WHO_CUBLAS ? "cublasLt" : k->who == WHO_KITE ? "kite_gemm" : k->variant;
}

/* Waits for the stream; a CUDA error (a kernel fault) is fatal. */
static void drain(const struct gemm_bench *b, const struct problem *p, const struct contender *k)
{
  cudaError_t e = cudaStreamSynchronize(b->stream);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess)
    die("CUDA error on %s (%s): %s (%s)", p->name, label(k), cudaGetErrorName(e), cudaGetErrorString(e));
}

/* Records a kite failure on k; one inside CUDA is fatal, as in the row bench. */
static void kite_failed(struct contender *k, const struct problem *p, kite_status st)
{
  k->st = st;
  k->live = 0;
  snprintf(k->why, sizeof k->why, "%s", kite_last_error());
  if (st == KITE_ERR_CUDA) die("%s (%s): %s: %s; stopping", p->name, label(k), kite_status_str(st), k->why);
}

/* ---- checks ------------------------------------------------------------------------ */

/* Line i of n spread over [0, total): the first and the last included. */
static int64_t spread(int64_t i, int64_t n, int64_t total)
{
  return n > 1 ? i * (total - 1) / (n - 1) : 0;
}

/* Rows of an operand (set 0) as floats: out[r * K + k] for the spread rows. */
static float *fetch_rows(const struct gemm_bench *b, const char *dev, int64_t rows, int64_t n, int64_t K)
{
  size_t row_bytes = (size_t)K * (size_t)b->esab;
  float *out = xmalloc((size_t)n * (size_t)K * sizeof *out);
  void *h = xmalloc(row_bytes);
  for (int64_t r = 0; r < n; r++) {
    to_host(b, h, dev + (size_t)spread(r, n, rows) * row_bytes, row_bytes);
    for (int64_t k = 0; k < K; k++) out[r * K + k] = elem_to_f32(b->o.ab, h, (size_t)k);
  }
  free(h);
  return out;
}

/* cuBLASLt's C_ref against float64 dot products at CHECK_LINES^2 entries:
   relative Frobenius error over them; NAN if one is not finite. */
static double check_cublas(const struct gemm_bench *b, const struct problem *p)
{
  int64_t nr = p->M < CHECK_LINES ? p->M : CHECK_LINES, nc = p->N < CHECK_LINES ? p->N : CHECK_LINES, K = p->K;
  float *a = fetch_rows(b, p->A, p->M, nr, K), *bt = fetch_rows(b, p->B, p->N, nc, K);
  size_t c_row = (size_t)p->N * (size_t)b->esc;
  void *crow = xmalloc(c_row);
  double num = 0, den = 0;
  int bad = 0;
  for (int64_t r = 0; r < nr; r++) {
    to_host(b, crow, (const char *)p->C_ref + (size_t)spread(r, nr, p->M) * c_row, c_row);
    for (int64_t s = 0; s < nc; s++) {
      double ref = 0;
      for (int64_t k = 0; k < K; k++) ref += (double)a[r * K + k] * (double)bt[s * K + k];
      double got = elem_to_f32(b->o.c, crow, (size_t)spread(s, nc, p->N));
      if (!isfinite(got)) bad++;
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  }
  free(a);
  free(bt);
  free(crow);
  if (bad) return NAN;
  return den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
}

/* Squared error and squared reference of n elements of C against C_ref from
   element off, added to e[0] and e[1]; returns how many were not finite. */
static size_t compare_span(const struct gemm_bench *b, const struct problem *p, size_t off, size_t n, void *hc,
                           void *hr, double e[2])
{
  size_t es = (size_t)b->esc, bad = 0;
  to_host(b, hc, (const char *)p->C + off * es, n * es);
  to_host(b, hr, (const char *)p->C_ref + off * es, n * es);
  for (size_t i = 0; i < n; i++) {
    double x = elem_to_f32(b->o.c, hc, i), r = elem_to_f32(b->o.c, hr, i);
    if (!isfinite(x)) {
      bad++;
      continue;
    }
    e[0] += (x - r) * (x - r);
    e[1] += r * r;
  }
  return bad;
}

/* ||C - C_ref|| / ||C_ref|| over set 0's C (dense, ldc = N): every element,
   or when tuning CMP_ROWS whole rows spread over M (test_gemm verified every
   variant in full; here the check only keeps a broken one out of the table,
   and copying 2^28 elements per variant would take most of a tune); NAN if
   any compared element is not finite. */
static double compare_with_ref(const struct gemm_bench *b, const struct problem *p)
{
  const size_t N = (size_t)p->N, total = (size_t)p->M * N;
  const int sampled = (b->o.tune || b->o.check_dispatch) && p->M > CMP_ROWS;
  const size_t chunk = sampled ? N : (total < CMP_CHUNK ? total : CMP_CHUNK);
  void *hc = xmalloc(chunk * (size_t)b->esc), *hr = xmalloc(chunk * (size_t)b->esc);
  double e[2] = { 0, 0 };
  size_t bad = 0;
  if (sampled)
    for (int64_t r = 0; r < CMP_ROWS; r++)
      bad += compare_span(b, p, (size_t)spread(r, CMP_ROWS, p->M) * N, N, hc, hr, e);
  else
    for (size_t off = 0; off < total; off += chunk)
      bad += compare_span(b, p, off, total - off < chunk ? total - off : chunk, hc, hr, e);
  free(hc);
  free(hr);
  if (bad) return NAN;
  return e[1] > 0 ? sqrt(e[0] / e[1]) : (e[0] > 0 ? INFINITY : 0);
}

static int check_ok(double err)
{
  return !isnan(err) && err <= CHECK_TOL;
}

/* cuBLASLt's reference C (into C_ref, poisoned first), checked on samples. */
static void check_reference(struct gemm_bench *b, const struct problem *p, struct contender *k)
{
  CUDA_CHECK(cudaMemsetAsync(p->C_ref, POISON_BYTE, p->c_bytes, b->stream));
  cublas_gemm(b, p, p->A, p->B, p->C_ref);
  drain(b, p, k);
  k->err = check_cublas(b, p);
  k->live = 1;
  if (!check_ok(k->err)) {
    printf("# %s: cuBLASLt's C differs from the f64 reference by %.3g at sampled entries: FAIL "
           "(the layout mapping in bench_gemm.c is wrong?)\n", p->name, k->err);
    b->failures++;
  }
}

/* A kite contender's first launch, on set 0 with C poisoned, then its C
   against cuBLASLt's (when there is one). */
static void check_kite(struct gemm_bench *b, const struct problem *p, struct contender *k, int have_ref)
{
  CUDA_CHECK(cudaMemsetAsync(p->C, POISON_BYTE, p->c_bytes, b->stream));
  kite_status st = launch(b, p, k, 0);
  drain(b, p, k);
  if (st != KITE_OK) {
    kite_failed(k, p, st);
    return;
  }
  k->live = 1;
  if (have_ref) k->err = compare_with_ref(b, p);
}

/* ---- timing ------------------------------------------------------------------------ */

/* One launch of k on the next buffer set; stops timing k on a kite error. */
static void launch_next(struct gemm_bench *b, struct problem *p, struct contender *k)
{
  kite_status st = launch(b, p, k, p->next_set);
  p->next_set = (p->next_set + 1) % p->nsets;
  if (st != KITE_OK) kite_failed(k, p, st);
}

/* The warm-up, timed as a whole: its mean launch time sets k's batch. */
static void warm_up(struct gemm_bench *b, struct problem *p, struct contender *k)
{
  int n = b->o.warmup > 0 ? b->o.warmup : 1;
  cudaEvent_t e[2];
  float ms = 0;
  for (int i = 0; i < 2; i++) CUDA_CHECK(cudaEventCreate(&e[i]));
  CUDA_CHECK(cudaEventRecord(e[0], b->stream));
  for (int i = 0; i < n && k->live; i++) launch_next(b, p, k);
  CUDA_CHECK(cudaEventRecord(e[1], b->stream));
  drain(b, p, k);
  CUDA_CHECK(cudaEventElapsedTime(&ms, e[0], e[1]));
  for (int i = 0; i < 2; i++) CUDA_CHECK(cudaEventDestroy(e[i]));
  k->est_us = (double)ms * 1e3 / n;
  k->batch = 1;
  if (k->est_us < SAMPLE_MIN_US) {
    double want = ceil(SAMPLE_MIN_US / (k->est_us > 0 ? k->est_us : 1.0));
    k->batch = want > MAX_BATCH ? MAX_BATCH : (int)want;
  }
}

/* Rounds: --reps, else as many as fit TIME_BUDGET_US for the longest sample. */
static int rounds(const struct gemm_bench *b, const struct contender *cs, int n)
{
  if (b->o.reps > 0) return b->o.reps;
  double longest = 1;
  for (int i = 0; i < n; i++)
    if (cs[i].live && cs[i].est_us * cs[i].batch > longest) longest = cs[i].est_us * cs[i].batch;
  double r = TIME_BUDGET_US / longest;
  return r < MIN_REPS ? MIN_REPS : r > MAX_REPS ? MAX_REPS : (int)r;
}

/* Warms up every live contender, then times them in turns: round r gives
   each one sample (its batch of launches between two events). */
static void time_contenders(struct gemm_bench *b, struct problem *p, struct contender *cs, int n)
{
  for (int i = 0; i < n; i++)
    if (cs[i].live) warm_up(b, p, &cs[i]);
  int reps = rounds(b, cs, n);
  cudaEvent_t *ev = xmalloc((size_t)n * (size_t)reps * 2 * sizeof *ev);
  for (size_t i = 0; i < (size_t)n * (size_t)reps * 2; i++) CUDA_CHECK(cudaEventCreate(&ev[i]));
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < n; i++) {
      struct contender *k = &cs[i];
      if (!k->live) continue;
      size_t e = ((size_t)i * (size_t)reps + (size_t)r) * 2;
      CUDA_CHECK(cudaEventRecord(ev[e], b->stream));
      for (int j = 0; j < k->batch && k->live; j++) launch_next(b, p, k);
      CUDA_CHECK(cudaEventRecord(ev[e + 1], b->stream));
    }
  CUDA_CHECK(cudaStreamSynchronize(b->stream));
  CUDA_CHECK(cudaGetLastError());
  float *ms = xmalloc((size_t)reps * sizeof *ms);
  for (int i = 0; i < n; i++) {
    if (!cs[i].live) continue;
    for (int r = 0; r < reps; r++) {
      size_t e = ((size_t)i * (size_t)reps + (size_t)r) * 2;
      CUDA_CHECK(cudaEventElapsedTime(&ms[r], ev[e], ev[e + 1]));
      ms[r] /= (float)cs[i].batch;
    }
    cs[i].t = timing_of(ms, reps);
    cs[i].reps = reps;
  }
  free(ms);
  for (size_t i = 0; i < (size_t)n * (size_t)reps * 2; i++) CUDA_CHECK(cudaEventDestroy(ev[i]));
  free(ev);
}

/* ---- variants ---------------------------------------------------------------------- */

/* The runtime's alignment rule: lowest set bit of A's and B's pointers and
   byte strides, capped at 16 (C is stored by threads, any alignment). */
static int32_t problem_align(const struct gemm_bench *b, const struct problem *p)
{
  uint64_t bits = 16 | (uint64_t)(uintptr_t)p->A | (uint64_t)(uintptr_t)p->B | (uint64_t)(p->K * b->esab);
  return (int32_t)(bits & (~bits + 1));
}

static int fits(const kite_variant_info *v, const struct gemm_bench *b, const struct problem *p, int32_t align)
{
  return strcmp(v->op, "gemm") == 0 && v->dtype == b->o.ab && v->dtype_out == b->o.c && p->N >= v->n_min &&
         p->N <= v->n_max && v->align > 0 && align % v->align == 0;
}

static kite_variant_info variant_at(int32_t i)
{
  kite_variant_info v;
  kite_status s = kite_variant_get(i, &v);
  if (s != KITE_OK) die("kite_variant_get(%d): %s: %s", (int)i, kite_status_str(s), kite_last_error());
  return v;
}

/* The variant kite_explain names for p among those that fit, or "?". */
static void dispatched_name(const struct gemm_bench *b, const struct problem *p, char *out, size_t len)
{
  char text[EXPLAIN_LEN] = "";
  const char *best = NULL;
  if (kite_explain("gemm", b->o.ab, p->M, p->N, p->K, text, sizeof text) == KITE_OK) {
    int32_t align = problem_align(b, p), nv = kite_variant_count();
    for (int32_t i = 0; i < nv; i++) {
      kite_variant_info v = variant_at(i);
      if (fits(&v, b, p, align) && has_word(text, v.name) && (!best || strlen(v.name) > strlen(best)))
        best = v.name;
    }
  }
  snprintf(out, len, "%s", best ? best : "?");
}

/* cs[0] cuBLASLt, cs[1] kite_gemm, then with --variants every variant that
   fits; returns the count (cs has room for 2 + kite_variant_count()). */
static int list_contenders(const struct gemm_bench *b, const struct problem *p, struct contender *cs)
{
  int n = 0;
  memset(cs, 0, (size_t)(2 + kite_variant_count()) * sizeof *cs);
  cs[n++].who = WHO_CUBLAS;
  cs[n++].who = WHO_KITE;
  if (b->o.variants) {
    int32_t align = problem_align(b, p), nv = kite_variant_count();
    for (int32_t i = 0; i < nv; i++) {
      kite_variant_info v = variant_at(i);
      if (!fits(&v, b, p, align)) continue;
      cs[n].who = WHO_VARIANT;
      cs[n++].variant = v.name;
    }
  }
  for (int i = 0; i < n; i++) cs[i].err = NAN;
  return n;
}

/* ---- output ------------------------------------------------------------------------- */

static void print_header(const struct gemm_bench *b)
{
  char reps[16] = "20-50";
  if (b->o.reps) snprintf(reps, sizeof reps, "%d", b->o.reps);
  printf("# kite-bench gemm: %s (%d SMs, L2 %.1f MiB); C = A*B^T, A MxK and B NxK row-major, "
         "A,B %s, C %s, f32 accumulation, alpha 1, beta 0\n", b->dev.name, b->dev.sms,
         (double)b->dev.l2 / (1 << 20), dtype_name(b->o.ab), dtype_name(b->o.c));
  bench_print_dispatch_set();
  printf("# cuBLASLt: TN column-major (C^T = B * A^T), CUBLAS_COMPUTE_32F, top heuristic algorithm, "
         "%zu MiB workspace\n", WORKSPACE_BYTES >> 20);
  printf("# TFLOP/s = 2*M*N*K / median time; buffer sets rotated past %dx L2; contenders take turns; "
         "warm-up %d; median of %s rounds; rel_err = ||kite - cuBLASLt|| / ||cuBLASLt||, FAIL > %g\n",
         L2_COVER, b->o.warmup, reps, CHECK_TOL);
  if (b->o.variants)
    printf("# '=' kite_gemm (dispatch); '*' the variant it dispatches to, run through kite_run_variant\n");
  printf("%-17s %-1s %-44s %9s %8s %9s %9s %6s %8s %s\n", "shape", "", "variant", "kite_us", "kite_TF",
         "cublas_us", "cublas_TF", "ratio", "rel_err", "check");
  fflush(stdout);
}

static const char *check_word(double err)
{
  return isnan(err) ? "FAIL" : err > CHECK_TOL ? "FAIL" : "ok";
}

/* A row for a kite contender k (timed, or with why it was not), next to cuBLASLt's cub. */
static void print_row(const struct problem *p, const char *mark, const char *name, const struct contender *k,
                      const struct contender *cub)
{
  char cu_us[16] = "-", cu_tf[16] = "-";
  if (cub->live) {
    snprintf(cu_us, sizeof cu_us, "%.1f", cub->t.median_us);
    snprintf(cu_tf, sizeof cu_tf, "%.1f", tflops(p, cub->t.median_us));
  }
  if (!k->live) {
    const char *what = k->who == WHO_KITE && k->st == KITE_ERR_NO_KERNEL ? "no kernel" : "FAILED";
    printf("%-17s %-1s %-44s %9s %8s %9s %9s %6s %8s %s", p->name, mark, name, "-", "-", cu_us, cu_tf, "-", "-",
           what);
    if (k->st != KITE_ERR_NO_KERNEL || k->who != WHO_KITE) printf(" %s: %s", kite_status_str(k->st), k->why);
    printf("\n");
    return;
  }
  char ratio[16] = "-", err[16] = "-";
  if (cub->live) snprintf(ratio, sizeof ratio, "%.3f", cub->t.median_us / k->t.median_us);
  if (!isnan(k->err) || cub->live) snprintf(err, sizeof err, "%.2e", k->err);
  printf("%-17s %-1s %-44s %9.1f %8.1f %9s %9s %6s %8s %s\n", p->name, mark, name, k->t.median_us,
         tflops(p, k->t.median_us), cu_us, cu_tf, ratio, err, cub->live ? check_word(k->err) : "unchecked");
}

/* A variant that turned the problem down when run (its range or alignment as
   the runtime sees them): listed, not counted as a failure. */
static int skipped(const struct contender *k)
{
  return k->who == WHO_VARIANT && !k->live && (k->st == KITE_ERR_UNSUPPORTED || k->st == KITE_ERR_NO_KERNEL);
}

static void csv_header(FILE *f)
{
  fprintf(f, "shape,M,N,K,ab,c,who,variant,dispatched,median_us,min_us,max_us,tflops,cublas_median_us,"
             "cublas_tflops,ratio_to_cublas,rel_err,check,buffer_sets,reps,batch,target\n");
}

static void csv_row(struct gemm_bench *b, const struct problem *p, const struct contender *k,
                    const struct contender *cub, const char *variant, int dispatched)
{
  if (!b->csv) return;
  static const char *const WHO[] = { "cublaslt", "kite", "variant" };
  FILE *f = b->csv;
  fprintf(f, "%s,%lld,%lld,%lld,%s,%s,%s,%s,%d,", p->name, (long long)p->M, (long long)p->N, (long long)p->K,
          dtype_name(b->o.ab), dtype_name(b->o.c), WHO[k->who], variant, dispatched);
  if (k->live) fprintf(f, "%.3f,%.3f,%.3f,%.2f,", k->t.median_us, k->t.min_us, k->t.max_us, tflops(p, k->t.median_us));
  else fprintf(f, ",,,,");
  if (cub->live) fprintf(f, "%.3f,%.2f,", cub->t.median_us, tflops(p, cub->t.median_us));
  else fprintf(f, ",,");
  if (k->live && cub->live) fprintf(f, "%.5f,", cub->t.median_us / k->t.median_us);
  else fprintf(f, ",");
  if (!isnan(k->err)) fprintf(f, "%.3e,", k->err);
  else fprintf(f, ",");
  const char *check = !k->live ? (k->who == WHO_KITE && k->st == KITE_ERR_NO_KERNEL ? "no_kernel"
                                  : skipped(k) ? "skipped" : "failed")
                      : (k->who != WHO_CUBLAS && !cub->live) ? "unchecked" : check_word(k->err);
  fprintf(f, "%s,%d,%d,%d,%d\n", check, p->nsets, k->reps, k->batch, p->target);
  fflush(f);
}

/* ---- one shape -------------------------------------------------------------------------- */

static int passed(const struct contender *k, const struct contender *cub)
{
  return k->live && cub->live && check_ok(k->err);
}

/* --tune: the fastest two variants that passed their check, as bench/tuned
   lines (kg_tune.c's format), and a "failed" line for each that did not. */
static void tune_lines(struct gemm_bench *b, const struct problem *p, const struct contender *cs, int n)
{
  const struct tune_key key = { "gemm", b->o.ab, b->o.c, p->M, p->N, p->K };
  struct ranking top;
  ranking_init(&top, 2);
  for (int i = 2; i < n; i++) {
    const struct contender *k = &cs[i];
    if (skipped(k)) continue;
    if (passed(k, &cs[0])) {
      ranking_add(&top, k->variant, k->t.median_us);
      times_line(b->run->out, &key, k->variant, k->t.median_us, b->dev.sms);
    } else {
      tune_line(b->run->out, &key, NULL, k->variant, b->tune_tail);
    }
  }
  tune_line(b->run->out, &key, &top, NULL, b->tune_tail);
}

/* Prints and records the shape's rows; adds to the summary. */
static void report(struct gemm_bench *b, const struct problem *p, const struct contender *cs, int n,
                   const char *chosen)
{
  const struct contender *cub = &cs[0], *api = &cs[1], *best = NULL;
  const char *api_name = api->live ? chosen : api->st == KITE_ERR_NO_KERNEL ? "no kernel" : "dispatch";
  print_row(p, b->o.variants ? "=" : "", api_name, api, cub);
  csv_row(b, p, cub, cub, cub->live ? p->algo_text : "cublasLt", 0);
  csv_row(b, p, api, cub, api->live ? chosen : "", 1);
  if (b->o.variants && cub->live)
    printf("%-17s %-1s %-44s %9s %8s %9.1f %9.1f %6s %8.2e %s  (sampled, vs f64; %s)\n", p->name, "", "cublasLt",
           "-", "-", cub->t.median_us, tflops(p, cub->t.median_us), "1.000", cub->err, check_word(cub->err),
           p->algo_text);
  for (int i = 2; i < n; i++) {
    const struct contender *k = &cs[i];
    int is_chosen = strcmp(k->variant, chosen) == 0;
    if (skipped(k)) {
      printf("%-17s %-1s %-44s skipped: %s: %s\n", p->name, "", k->variant, kite_status_str(k->st), k->why);
    } else {
      print_row(p, is_chosen ? "*" : "", k->variant, k, cub);
      if (!k->live || (cub->live && !check_ok(k->err))) b->failures++;
    }
    csv_row(b, p, k, cub, k->variant, is_chosen);
    if (passed(k, cub) && (!best || k->t.median_us < best->t.median_us)) best = k;
  }
  if (best)
    printf("#   best variant: %s, %.1f TFLOP/s, %.3f of cuBLASLt\n", best->variant, tflops(p, best->t.median_us),
           cub->t.median_us / best->t.median_us);
  if (b->run) tune_lines(b, p, cs, n);
  if (b->o.check_dispatch && best && passed(api, cub)) {
    const double ratio = api->t.median_us / best->t.median_us;
    b->log_check += log(ratio);
    b->worst_check = ratio > b->worst_check ? ratio : b->worst_check;
    b->n_check++;
    printf("#   dispatched / best variant: %.3f\n", ratio);
  }
  for (int i = 2; b->o.check_dispatch && best && i < n; i++)
    if (strcmp(cs[i].variant, chosen) == 0 && passed(&cs[i], cub)) {
      const double ratio = cs[i].t.median_us / best->t.median_us;
      b->log_named += log(ratio);
      b->worst_named = ratio > b->worst_named ? ratio : b->worst_named;
      b->n_named++;
    }
  if (!api->live && api->st != KITE_ERR_NO_KERNEL) b->failures++;
  if (api->live && cub->live && !check_ok(api->err)) b->failures++;
  fflush(stdout);

  if (!p->target) return;
  b->n_target++;
  if (passed(api, cub)) {
    b->log_api += log(cub->t.median_us / api->t.median_us);
    b->n_api++;
  } else {
    b->n_target_missing++;
  }
  if (best) {
    b->log_best += log(cub->t.median_us / best->t.median_us);
    b->n_best++;
  }
  if (p->M == HEADLINE && p->N == HEADLINE && p->K == HEADLINE && passed(api, cub))
    b->headline = cub->t.median_us / api->t.median_us;
}

/* The contender's check; when tuning (shape k), a variant is announced to
   the supervisor first, and one lost there before is skipped. */
static void check_contender(struct gemm_bench *b, struct problem *p, struct contender *k, int shape)
{
  if (b->run && k->who == WHO_VARIANT) {
    const struct tune_key key = { "gemm", b->o.ab, b->o.c, p->M, p->N, p->K };
    if (!tune_try(b->run, shape, &key, k->variant, b->tune_tail)) {
      k->st = KITE_ERR_UNSUPPORTED;
      snprintf(k->why, sizeof k->why, "lost its CUDA context on this shape in an earlier run");
      return;
    }
  }
  check_kite(b, p, k, p->has_algo);
}

static void bench_shape(struct gemm_bench *b, const struct gemm_shape *s, struct contender *cs, int shape)
{
  struct problem p;
  char chosen[256];
  memset(&p, 0, sizeof p);
  p.M = s->M;
  p.N = s->N;
  p.K = s->K;
  p.target = is_target(s);
  snprintf(p.name, sizeof p.name, "%lldx%lldx%lld", (long long)p.M, (long long)p.N, (long long)p.K);
  if (!problem_alloc(b, &p)) {
    printf("%-17s   skipped: one set of A, B and C does not fit in the device's free memory\n", p.name);
    b->failures++;
    return;
  }
  plan_cublas(b, &p);
  int n = list_contenders(b, &p, cs);
  if (p.has_algo) check_reference(b, &p, &cs[0]);
  for (int i = 1; i < n; i++) check_contender(b, &p, &cs[i], shape);
  dispatched_name(b, &p, chosen, sizeof chosen);
  if (b->run) tune_timing(b->run, shape);
  time_contenders(b, &p, cs, n);
  report(b, &p, cs, n, chosen);
  problem_free(&p);
}

static void print_summary(const struct gemm_bench *b)
{
  printf("# geomean kite/cuBLASLt over the target shapes (M >= %d; M, N, K multiples of %d; issue 3: >= 0.95): ",
         TARGET_M_MIN, TARGET_ALIGN);
  if (b->n_api) printf("%.3f over %d of %d shapes", exp(b->log_api / b->n_api), b->n_api, b->n_target);
  else printf("none, no checked kite result on any of %d shapes", b->n_target);
  if (b->n_api && b->n_target_missing)
    printf(" (%d without a checked kite result: no kernel, failed or FAIL)", b->n_target_missing);
  printf("\n");
  if (b->o.variants && b->n_best)
    printf("# geomean best variant/cuBLASLt over %d target shapes: %.3f\n", b->n_best, exp(b->log_best / b->n_best));
  if (b->o.check_dispatch)
    printf("check-dispatch: %d shapes, geomean dispatched/best %.3f, worst %.3f (targets <= 1.05, <= 1.20)\n",
           b->n_check, b->n_check ? exp(b->log_check / b->n_check) : 0.0, b->worst_check);
  if (b->o.check_dispatch)
    printf("check-dispatch, the dispatched variant run by name: %d shapes, geomean %.3f, worst %.3f\n", b->n_named,
           b->n_named ? exp(b->log_named / b->n_named) : 0.0, b->worst_named);
  if (b->headline > 0) printf("# %dx%dx%d: kite/cuBLASLt %.3f\n", HEADLINE, HEADLINE, HEADLINE, b->headline);
  else printf("# %dx%dx%d: kite/cuBLASLt not measured\n", HEADLINE, HEADLINE, HEADLINE);
}

static FILE *open_csv(const char *path)
{
  FILE *f = fopen(path, "a");
  if (!f) die("cannot append to %s: %s", path, strerror(errno));
  if (fseek(f, 0, SEEK_END) != 0) die("cannot seek %s: %s", path, strerror(errno));
  if (ftell(f) == 0) csv_header(f);
  return f;
}

/* ---- --overhead ---------------------------------------------------------------------- */

#define OVERHEAD_CALLS 2000
#define OVERHEAD_DRAIN 32       /* calls between stream syncs: the launch queue never fills */

/* kite_gemm's host time from its call to the moment its kernel launch is
   reached (launch_clock.c), over OVERHEAD_CALLS calls after a warm-up, into
   to_launch and whole (ms).  With alternate, every other call has M - 1, so
   no call finds its choice remembered from the one before (kite_gemm.c). */
static void overhead_calls(struct gemm_bench *b, const struct problem *p, int alternate, float *to_launch,
                           float *whole)
{
  for (int i = -OVERHEAD_DRAIN; i < OVERHEAD_CALLS; i++) {
    const int64_t M = alternate && (i & 1) && p->M > 1 ? p->M - 1 : p->M;
    const uint64_t t0 = launch_clock_now();
    kite_status st = kite_gemm(b->o.ab, b->o.c, M, p->N, p->K, 1.0f, p->A, p->K, p->B, p->K, 0.0f, p->C, p->N,
                               b->stream);
    const uint64_t t1 = launch_clock_ns(), t2 = launch_clock_now();
    if (st != KITE_OK) die("kite_gemm: %s: %s", kite_status_str(st), kite_last_error());
    if (t1 < t0) die("no launch seen by launch_clock.c (is nvcc's launch entry still __cudaLaunchKernel?)");
    if (i >= 0) {
      to_launch[i] = (float)(t1 - t0) * 1e-6f;   /* ms, for timing_of */
      whole[i] = (float)(t2 - t0) * 1e-6f;
    }
    if ((i + 1) % OVERHEAD_DRAIN == 0) CUDA_CHECK(cudaStreamSynchronize(b->stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(b->stream));
}

/* One shape's line: the same call repeated, and calls alternating with M - 1. */
static void overhead_shape(struct gemm_bench *b, const struct gemm_shape *s)
{
  struct problem p;
  memset(&p, 0, sizeof p);
  p.M = s->M;
  p.N = s->N;
  p.K = s->K;
  if (!problem_alloc(b, &p)) die("%lldx%lldx%lld does not fit", (long long)p.M, (long long)p.N, (long long)p.K);
  float *to_launch = xmalloc(OVERHEAD_CALLS * sizeof *to_launch), *whole = xmalloc(OVERHEAD_CALLS * sizeof *whole);
  overhead_calls(b, &p, 1, to_launch, whole);
  const struct timing m = timing_of(to_launch, OVERHEAD_CALLS);
  overhead_calls(b, &p, 0, to_launch, whole);
  const struct timing a = timing_of(to_launch, OVERHEAD_CALLS), w = timing_of(whole, OVERHEAD_CALLS);
  char variant[256] = "", name[64];
  dispatched_name(b, &p, variant, sizeof variant);
  snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)p.M, (long long)p.N, (long long)p.K);
  printf("%-17s %-44s %12.2f %12.2f %12.2f %12.2f %12.2f\n", name, variant, a.median_us, a.min_us, w.median_us,
         m.median_us, m.min_us);
  free(to_launch);
  free(whole);
  problem_free(&p);
}

static int overhead_run(struct gemm_bench *b)
{
  setup(b);
  printf("# kite_gemm host overhead, %s: call to launch (argument checks, lookup, tensor maps), %d calls per shape\n",
         b->dev.name, OVERHEAD_CALLS);
  printf("# median/min: the same call repeated (its choice remembered); new_*: calls alternating with M - 1\n");
  printf("%-17s %-44s %12s %12s %12s %12s %12s\n", "shape", "variant", "median_us", "min_us", "call_us",
         "new_median", "new_min");
  for (int i = 0; i < b->o.nshapes; i++) overhead_shape(b, &b->o.shapes[i]);
  teardown(b);
  return 0;
}

/* The bench over every shape; when tuning, in a supervised child (run set:
   shape i is the i-th of the grid, those before run->from are done). */
static int gemm_run(struct tune_run *run, void *ctx)
{
  struct gemm_bench *b = ctx;
  b->run = run;
  setup(b);
  if (b->o.csv) b->csv = open_csv(b->o.csv);
  if (run) bench_tune_tail(b->dev.name, b->tune_tail, sizeof b->tune_tail);
  print_header(b);

  struct contender *cs = xmalloc((size_t)(2 + kite_variant_count()) * sizeof *cs);
  for (int i = 0; i < b->o.nshapes; i++) {
    if (run && !tune_shape(run, i)) continue;
    bench_shape(b, &b->o.shapes[i], cs, i);
    if (run) tune_done(run, i);
  }
  free(cs);
  print_summary(b);

  teardown(b);
  if (b->csv && fclose(b->csv) != 0) die("writing %s failed", b->o.csv);
  if (b->failures) {
    fprintf(stderr, "kite-bench gemm: %d failure(s) (FAILED or FAIL rows, cuBLASLt problems)\n", b->failures);
    return 1;
  }
  return 0;
}

int cmd_gemm(int argc, char **argv)
{
  struct gemm_bench b;
  memset(&b, 0, sizeof b);
  b.o.ab = KITE_BF16;
  b.o.c = KITE_BF16;
  b.o.warmup = -1;
  parse_args(&b.o, argc, argv);
  b.esab = dtype_size(b.o.ab);
  b.esc = dtype_size(b.o.c);
  if (b.o.overhead) return overhead_run(&b);
  if (!b.o.tune) return gemm_run(NULL, &b);
  /* --tune: appended to the row ops' file, in children that may fault (tune_supervise) */
  FILE *tsv = fopen(b.o.tune, "a"), *times = b.o.times ? fopen(b.o.times, "a") : NULL;
  if (!tsv) die("cannot append to %s: %s", b.o.tune, strerror(errno));
  if (b.o.times && !times) die("cannot append to %s: %s", b.o.times, strerror(errno));
  if (times && (fseek(times, 0, SEEK_END) != 0 || ftell(times) == 0))
    fprintf(times, "%s\n", TIMES_HEADER);   /* a new file (the row ops' tune writes it first otherwise) */
  if (times) fprintf(times, "# kite-bench gemm --tune: every checked variant's median (warm-up %d, %d rounds)\n",
                     b.o.warmup, b.o.reps);
  int rc = tune_supervise(tsv, times, gemm_run, &b);
  if (fclose(tsv) != 0) die("writing %s failed", b.o.tune);
  if (times && fclose(times) != 0) die("writing %s failed", b.o.times);
  if (rc < 0) die("gemm tune: stopped early; %s holds the shapes measured so far", b.o.tune);
  printf("gemm tune: appended to %s (%s)\n", b.o.tune, rc ? "with failures" : "every variant checked");
  return 0;
}
