/* kite_bench.c - memory-bandwidth benchmark of kite's row ops, and the
 * command line of kite-bench.
 *
 *   kite-bench [rows] [options]         time rmsnorm, softmax, cross_entropy
 *   kite-bench gemm [options]           kite_gemm against cuBLASLt (bench_gemm.c)
 *   kite-bench --explain OP DTYPE M N [K]
 *   kite-bench --list                   the generated variant table
 *
 * Method: every timed launch is bracketed by its own pair of CUDA events;
 * after a warm-up the median of the timed runs is reported.  Consecutive runs
 * use different buffer sets (x, y, targets, loss), rotating through enough
 * sets that their footprint is over 3x the device's L2, so no run finds its
 * input in L2.  Inputs are random (host xorshift, copied once).  Each shape is
 * compared with a device-to-device cudaMemcpyAsync of x's bytes, timed the
 * same way in the same run.  Bytes counted:
 *   rmsnorm        read x + write y (2*M*N*elem) + read w once (N*elem)
 *   softmax        read x + write y (2*M*N*elem)
 *   cross_entropy  read x (M*N*elem) + read targets (M*8) + write loss (M*4)
 *   copy           read x + write y (2*M*N*elem)
 * rstd and lse are not requested (NULL). */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_gemm.h"
#include "bench_util.h"
#include "kite.h"

#define MAX_NS 64
#define MAX_SETS 65536
#define RMS_EPS 1e-6f
#define CE_IGNORE (-100)

static const char *const ALL_OPS[] = { "rmsnorm", "softmax", "cross_entropy", "softmax_bwd", "cross_entropy_bwd",
                                       "rmsnorm_bwd", "layernorm", "layernorm_bwd" };
#define N_ALL_OPS 8

/* Ops that read targets (set_targets fills them per shape). */
static int uses_targets(const char *op) { return strncmp(op, "cross_entropy", 13) == 0; }
static const int64_t DEFAULT_NS[] = { 1024, 4096, 16384, 65536, 262144 };

/* ---- options --------------------------------------------------------------- */

struct opts {
  kite_dtype dtype;
  int dtype_given;    /* --dtype was passed: --tune then tunes that dtype alone */
  const char *ops[N_ALL_OPS];
  int nops;
  int64_t ns[MAX_NS];
  int nns;
  int64_t elems;
  int64_t min_rows;   /* rows of a shape at the least, whatever elems says (the tune's) */
  int64_t tune_from;  /* --tune: only the grid's N from this one up (a partial retune) */
  int confirm;        /* --tune: each shape's fastest this many timed again at M*N = elems */
  int variants, quick, device, warmup, reps;
  int aligned;        /* --check-dispatch draws row lengths that are multiples of 8 */
  uint64_t seed;      /* --check-dispatch's draws */
  const char *csv;
  const char *only;   /* --only: the variants --variants times (a glob of names) */
};

static void usage(FILE *f)
{
  fputs(
    "usage: kite-bench [rows] [options]\n"
    "       kite-bench gemm [options]      (kite-bench gemm --help)\n"
    "       kite-bench --explain OP DTYPE M N [K]\n"
    "       kite-bench --list\n"
    "\n"
    "Times kite's row ops against a device-to-device copy of the same bytes.\n"
    "  --dtype bf16|f16|f32   element type (default bf16)\n"
    "  --op NAME[,NAME..]     rmsnorm, softmax, cross_entropy (or ce), softmax_bwd,\n"
    "                         cross_entropy_bwd, rmsnorm_bwd, layernorm, layernorm_bwd, all\n"
    "                         (default all)\n"
    "  --n LIST               row lengths, comma-separated; 2^k allowed\n"
    "                         (default 1024,4096,16384,65536,262144)\n"
    "  --elems E              total elements M*N per problem, 2^k or a number (default 2^28);\n"
    "                         M = E / N (at least 1)\n"
    "  --variants             also time every variant that accepts each shape\n"
    "                         (kite_run_variant); '*' marks the one dispatch picks\n"
    "  --only GLOB            with --variants: only the variants whose name matches GLOB\n"
    "  --quick                fewer runs (warm-up 2, 10 timed), for smoke tests\n"
    "  --warmup W, --reps R   warm-up and timed runs (default 5 and 50)\n"
    "  --device I             CUDA device (default 0)\n"
    "  --csv FILE             also write one CSV row per measurement\n"
    "  --explain OP DTYPE M N [K]  print kite_explain's choice (no GPU needed)\n"
    "  --list                 print the generated variant table (no GPU needed)\n"
    "  --tune FILE            time every variant of every op (--op) and dtype (--dtype: that one alone)\n"
    "                         at N = 64 ... 262144 (powers of two, and 1.5 * 2^k from 1536 on; M*N = 2^26,\n"
    "                         M >= 1024) and write the fastest two per shape to FILE\n"
    "                         (bench/tuned/<gpu>.tsv, read by make gen)\n"
    "  --from N               with --tune: only the grid's N >= N (a retune of the long rows)\n"
    "  --confirm K            with --tune: each shape's fastest K timed again at M*N = --elems\n"
    "                         where that is more rows, and those times decide (default 3; 0: off)\n"
    "  --times FILE           with --tune: every variant's time at each shape to FILE (with a\n"
    "                         header; `kite-bench gemm --tune --times` appends the gemm ones)\n"
    "  --check-dispatch       30 random N per op (bf16): the dispatched variant's time over\n"
    "                         the best variant's, measured in the same run (with --variants:\n"
    "                         every variant's time too)\n"
    "  --aligned              with --check-dispatch: N a multiple of 8 (16-byte rows in bf16)\n"
    "  --seed S               with --check-dispatch: another draw of the 30 N\n",
    f);
}

static const char *canonical_op(const char *s)
{
  if (strcmp(s, "ce") == 0 || strcmp(s, "cross-entropy") == 0) return "cross_entropy";
  for (int i = 0; i < N_ALL_OPS; i++)
    if (strcmp(s, ALL_OPS[i]) == 0) return ALL_OPS[i];
  return NULL;
}

static void parse_ops(struct opts *o, const char *arg)
{
  char buf[256];
  if (strlen(arg) >= sizeof buf) die("--op list too long");
  strcpy(buf, arg);
  o->nops = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (strcmp(tok, "all") == 0) {
      for (int i = 0; i < N_ALL_OPS; i++) o->ops[i] = ALL_OPS[i];
      o->nops = N_ALL_OPS;
      return;
    }
    const char *op = canonical_op(tok);
    if (!op) die("unknown op '%s' (rmsnorm, softmax, cross_entropy, all)", tok);
    int dup = 0;
    for (int i = 0; i < o->nops; i++) dup |= o->ops[i] == op;
    if (!dup) o->ops[o->nops++] = op;
  }
  if (o->nops == 0) die("--op needs at least one op");
}

static void parse_ns(struct opts *o, const char *arg)
{
  char buf[1024];
  if (strlen(arg) >= sizeof buf) die("--n list too long");
  strcpy(buf, arg);
  o->nns = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (o->nns == MAX_NS) die("--n: at most %d row lengths", MAX_NS);
    int64_t n = parse_count(tok, "row length");
    if (n > INT32_MAX) die("--n: %lld is above 2^31-1", (long long)n);
    o->ns[o->nns++] = n;
  }
  if (o->nns == 0) die("--n needs at least one row length");
}

/* ---- --explain and --list (no GPU) ----------------------------------------- */

static int cmd_explain(int argc, char **argv)
{
  if (argc != 4 && argc != 5) {
    fputs("usage: kite-bench --explain OP DTYPE M N [K]\n", stderr);
    return 2;
  }
  kite_dtype d;
  if (!parse_dtype(argv[1], &d)) die("--explain: unknown dtype '%s' (bf16, f16, f32, e4m3)", argv[1]);
  const char *op = canonical_op(argv[0]);
  if (!op) op = argv[0];   /* "gemm" or an op kite does not know: let kite answer */
  int64_t M = parse_count(argv[2], "M"), N = parse_count(argv[3], "N");
  int64_t K = argc == 5 ? parse_count(argv[4], "K") : 0;
  char buf[EXPLAIN_LEN];
  kite_status s = kite_explain(op, d, M, N, K, buf, sizeof buf);
  if (s != KITE_OK) {
    fprintf(stderr, "kite-bench: kite_explain: %s: %s\n", kite_status_str(s), kite_last_error());
    return 1;
  }
  printf("%s\n", buf);
  return 0;
}

static int cmd_list(void)
{
  int32_t n = kite_variant_count();
  printf("%-44s %-14s %-5s %10s %10s %5s\n", "variant", "op", "dtype", "n_min", "n_max", "align");
  for (int32_t i = 0; i < n; i++) {
    kite_variant_info v;
    kite_status s = kite_variant_get(i, &v);
    if (s != KITE_OK) die("kite_variant_get(%d): %s: %s", (int)i, kite_status_str(s), kite_last_error());
    printf("%-44s %-14s %-5s %10lld %10lld %5d\n", v.name, v.op, dtype_name(v.dtype),
           (long long)v.n_min, (long long)v.n_max, (int)v.align);
  }
  printf("%d variants\n", (int)n);
  return 0;
}

/* ---- device buffers ---------------------------------------------------------- */

struct bench {
  struct opts o;
  int es;                   /* element size */
  int nsets;
  size_t x_stride;          /* bytes between sets' x (and y) */
  size_t rows_cap;          /* rows each set's target/loss arrays hold */
  char *x, *y;              /* nsets * x_stride bytes each */
  void *w;                  /* one weight row, max N elements */
  int64_t *tgt;             /* nsets * rows_cap */
  float *loss;              /* nsets * rows_cap */
  float *rstd, *mean;       /* rows_cap (the norms' backward inputs, shared by the sets) */
  float *dw, *db;           /* max N floats (rmsnorm_bwd, layernorm_bwd) */
  void *ws;                 /* their workspace, ws_bytes: the most any shape needs */
  size_t ws_bytes;
  int64_t tgt_n;            /* row length the targets were drawn for; 0 none */
  int64_t tgt_rows;
  int64_t confirm_elems;    /* --tune --confirm: M*N of the shapes confirmed (0: none) */
  cudaStream_t stream;
  cudaEvent_t *ev;          /* 2 * reps */
  float *ms;                /* reps */
  struct bench_device dev;
  FILE *csv;
  int failures;
};

static int64_t rows_for(const struct bench *b, int64_t n)
{
  int64_t m = b->o.elems / n;
  if (m < b->o.min_rows) m = b->o.min_rows;
  return m > 0 ? m : 1;
}

static size_t round_up(size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

static void open_device(struct bench *b)
{
  bench_open_device(b->o.device, &b->dev);
  CUDA_CHECK(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
}

static void alloc_buffers(struct bench *b)
{
  int64_t max_n = 0, max_rows = 0, max_elems = 0;
  for (int i = 0; i < b->o.nns; i++) {
    int64_t n = b->o.ns[i], m = rows_for(b, n);
    if (n > max_n) max_n = n;
    if (m > max_rows) max_rows = m;
    if (m * n > max_elems) max_elems = m * n;
  }
  size_t x_bytes = (size_t)max_elems * (size_t)b->es;
  b->x_stride = round_up(x_bytes, 256);
  b->rows_cap = (size_t)max_rows;

  /* Enough sets that x alone (cross_entropy reads nothing else) covers > 3x L2. */
  size_t want = 3 * b->dev.l2 / b->x_stride + 1;
  if (want < 2) want = 2;
  if (want > MAX_SETS) want = MAX_SETS;
  size_t per_set = 2 * b->x_stride + b->rows_cap * (sizeof(int64_t) + sizeof(float)) + 512;
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  size_t budget = free_b / 10 * 8;   /* leave room for the context and fragmentation */
  size_t fit = per_set ? budget / per_set : 0;
  if (fit < 2)
    die("a problem of %lld elements needs %.2f GiB for 2 buffer sets; the device has %.2f GiB free",
        (long long)max_elems, 2.0 * (double)per_set / (1 << 30), (double)free_b / (1 << 30));
  if (want > fit) {
    fprintf(stderr, "kite-bench: warning: memory allows %zu buffer sets, not the %zu wanted for 3x L2\n",
            fit, want);
    want = fit;
  }
  b->nsets = (int)want;
  size_t ns = (size_t)b->nsets;

  CUDA_CHECK(cudaMalloc((void **)&b->x, ns * b->x_stride));
  CUDA_CHECK(cudaMalloc((void **)&b->y, ns * b->x_stride));
  CUDA_CHECK(cudaMalloc(&b->w, (size_t)max_n * (size_t)b->es));
  CUDA_CHECK(cudaMalloc((void **)&b->tgt, ns * b->rows_cap * sizeof(int64_t)));
  CUDA_CHECK(cudaMalloc((void **)&b->loss, ns * b->rows_cap * sizeof(float)));
  CUDA_CHECK(cudaMalloc((void **)&b->rstd, b->rows_cap * sizeof(float)));
  CUDA_CHECK(cudaMalloc((void **)&b->mean, b->rows_cap * sizeof(float)));
  CUDA_CHECK(cudaMemset(b->mean, 0, b->rows_cap * sizeof(float)));
  CUDA_CHECK(cudaMalloc((void **)&b->dw, (size_t)max_n * sizeof(float)));
  CUDA_CHECK(cudaMalloc((void **)&b->db, (size_t)max_n * sizeof(float)));
  b->ws_bytes = 0;
  for (int i = 0; i < b->o.nns; i++) {   /* layernorm_bwd's two sums need the most */
    size_t need = 0;
    if (kite_layernorm_bwd_workspace(rows_for(b, b->o.ns[i]), b->o.ns[i], &need) != KITE_OK)
      die("kite_layernorm_bwd_workspace: %s", kite_last_error());
    if (need > b->ws_bytes) b->ws_bytes = need;
  }
  CUDA_CHECK(cudaMalloc(&b->ws, b->ws_bytes ? b->ws_bytes : 16));

  /* Inputs: random values in [-3, 3), every set drawn separately; w in [0.5, 1.5). */
  size_t xn = ns * b->x_stride / (size_t)b->es;
  size_t host_bytes = ns * b->x_stride;
  void *h = xmalloc(host_bytes > (size_t)max_n * 4 ? host_bytes : (size_t)max_n * 4);
  fill_random(h, xn, b->o.dtype, -3.f, 3.f, 1);
  CUDA_CHECK(cudaMemcpy(b->x, h, host_bytes, cudaMemcpyHostToDevice));
  fill_random(h, (size_t)max_n, b->o.dtype, 0.5f, 1.5f, 2);
  CUDA_CHECK(cudaMemcpy(b->w, h, (size_t)max_n * (size_t)b->es, cudaMemcpyHostToDevice));
  free(h);
  CUDA_CHECK(cudaMemset(b->y, 0, ns * b->x_stride));
  CUDA_CHECK(cudaMemset(b->tgt, 0, ns * b->rows_cap * sizeof(int64_t)));
  CUDA_CHECK(cudaMemset(b->loss, 0, ns * b->rows_cap * sizeof(float)));
  float *rs = xmalloc(b->rows_cap * sizeof(float));
  for (size_t i = 0; i < b->rows_cap; i++) rs[i] = 0.5f;
  CUDA_CHECK(cudaMemcpy(b->rstd, rs, b->rows_cap * sizeof(float), cudaMemcpyHostToDevice));
  free(rs);

  int nev = 2 * b->o.reps;
  b->ev = xmalloc((size_t)nev * sizeof *b->ev);
  for (int i = 0; i < nev; i++) CUDA_CHECK(cudaEventCreate(&b->ev[i]));
  b->ms = xmalloc((size_t)b->o.reps * sizeof *b->ms);
  CUDA_CHECK(cudaDeviceSynchronize());
}

/* Targets uniform in [0, n) for every set (cross_entropy), drawn once per n. */
static void set_targets(struct bench *b, int64_t n, int64_t rows)
{
  if (b->tgt_n == n && b->tgt_rows == rows) return;
  size_t cnt = (size_t)b->nsets * b->rows_cap;
  int64_t *h = xmalloc(cnt * sizeof *h);
  uint64_t s = 0x5eed0000ULL + (uint64_t)n;
  for (size_t i = 0; i < cnt; i++) h[i] = (int64_t)((xorshift(&s) >> 11) % (uint64_t)n);
  CUDA_CHECK(cudaMemcpy(b->tgt, h, cnt * sizeof *h, cudaMemcpyHostToDevice));
  free(h);
  b->tgt_n = n;
  b->tgt_rows = rows;
}

static void free_buffers(struct bench *b)
{
  for (int i = 0; i < 2 * b->o.reps; i++) CUDA_CHECK(cudaEventDestroy(b->ev[i]));
  free(b->ev);
  free(b->ms);
  CUDA_CHECK(cudaFree(b->x));
  CUDA_CHECK(cudaFree(b->y));
  CUDA_CHECK(cudaFree(b->w));
  CUDA_CHECK(cudaFree(b->tgt));
  CUDA_CHECK(cudaFree(b->loss));
  CUDA_CHECK(cudaFree(b->rstd));
  CUDA_CHECK(cudaFree(b->dw));
  CUDA_CHECK(cudaFree(b->db));
  CUDA_CHECK(cudaFree(b->mean));
  CUDA_CHECK(cudaFree(b->ws));
  CUDA_CHECK(cudaStreamDestroy(b->stream));
}

/* ---- one launch ---------------------------------------------------------------- */

struct shape {
  const char *op;
  int64_t M, N;
};

enum how { VIA_API, VIA_VARIANT, VIA_COPY };

static kite_row_args row_args(const struct bench *b, const struct shape *s, int set)
{
  kite_row_args a;
  memset(&a, 0, sizeof a);
  a.M = s->M;
  a.N = s->N;
  a.x = b->x + (size_t)set * b->x_stride;
  a.ldx = s->N;
  if (strcmp(s->op, "cross_entropy") == 0) {
    a.target = b->tgt + (size_t)set * b->rows_cap;
    a.ignore_index = CE_IGNORE;
    a.loss = b->loss + (size_t)set * b->rows_cap;
  } else {
    a.y = b->y + (size_t)set * b->x_stride;
    a.ldy = s->N;
    if (strcmp(s->op, "rmsnorm") == 0 || strcmp(s->op, "layernorm") == 0) {   /* layernorm: w as its bias too */
      a.w = b->w;
      a.eps = RMS_EPS;
      if (s->op[0] == 'l') a.b = b->w;
    }
    const int lnb = strcmp(s->op, "layernorm_bwd") == 0;
    if (strcmp(s->op, "softmax_bwd") == 0 || strcmp(s->op, "rmsnorm_bwd") == 0 || lnb) {
      a.dy = b->x + (size_t)((set + b->nsets / 2) % b->nsets) * b->x_stride;   /* another set's x: cold */
      a.lddy = s->N;
    }
    if (strcmp(s->op, "rmsnorm_bwd") == 0 || lnb) {   /* dw (and db) through the workspace */
      a.w = b->w;
      a.rstd = b->rstd;
      a.dw = b->dw;
      if (lnb) a.mean = b->mean, a.db = b->db;
      a.partials = b->ws;
      size_t need = 0;   /* the CTAs' partial rows the entry point would use */
      if ((lnb ? kite_layernorm_bwd_workspace : kite_rmsnorm_bwd_workspace)(s->M, s->N, &need) != KITE_OK)
        die("%s", kite_last_error());
      a.parts = (int64_t)(need / ((lnb ? 2 : 1) * round_up((size_t)s->N, 4) * sizeof(float)));
    }
    if (strcmp(s->op, "cross_entropy_bwd") == 0) {   /* lse: the loss buffer's floats; no dloss */
      a.target = b->tgt + (size_t)set * b->rows_cap;
      a.ignore_index = CE_IGNORE;
      a.lse = b->loss + (size_t)set * b->rows_cap;
    }
  }
  return a;
}

static kite_status launch(const struct bench *b, const struct shape *s, enum how how,
                          const char *variant, int set)
{
  kite_dtype d = b->o.dtype;
  if (how == VIA_COPY) {
    size_t bytes = (size_t)s->M * (size_t)s->N * (size_t)b->es;
    CUDA_CHECK(cudaMemcpyAsync(b->y + (size_t)set * b->x_stride, b->x + (size_t)set * b->x_stride, bytes,
                               cudaMemcpyDeviceToDevice, b->stream));
    return KITE_OK;
  }
  kite_row_args a = row_args(b, s, set);
  if (how == VIA_VARIANT) return kite_run_variant(variant, &a, b->stream);
  if (strcmp(s->op, "rmsnorm") == 0)
    return kite_rmsnorm_fwd(d, a.M, a.N, a.x, a.ldx, a.w, a.eps, a.y, a.ldy, NULL, b->stream);
  if (strcmp(s->op, "softmax") == 0)
    return kite_softmax_fwd(d, a.M, a.N, a.x, a.ldx, a.y, a.ldy, b->stream);
  if (strcmp(s->op, "softmax_bwd") == 0)
    return kite_softmax_bwd(d, a.M, a.N, a.x, a.ldx, a.dy, a.lddy, a.y, a.ldy, b->stream);
  if (strcmp(s->op, "cross_entropy_bwd") == 0)
    return kite_cross_entropy_bwd(d, a.M, a.N, a.x, a.ldx, a.target, a.ignore_index, a.lse, a.dloss, a.y, a.ldy,
                                  b->stream);
  if (strcmp(s->op, "layernorm") == 0)
    return kite_layernorm_fwd(d, a.M, a.N, a.x, a.ldx, a.w, a.b, a.eps, a.y, a.ldy, NULL, NULL, b->stream);
  if (strcmp(s->op, "rmsnorm_bwd") == 0)
    return kite_rmsnorm_bwd(d, a.M, a.N, a.x, a.ldx, a.w, a.w_offset, a.rstd, a.dy, a.lddy, a.y, a.ldy, a.dw,
                            a.partials, b->ws_bytes, b->stream);
  if (strcmp(s->op, "layernorm_bwd") == 0)
    return kite_layernorm_bwd(d, a.M, a.N, a.x, a.ldx, a.w, a.mean, a.rstd, a.dy, a.lddy, a.y, a.ldy, a.dw, a.db,
                              a.partials, b->ws_bytes, b->stream);
  return kite_cross_entropy_fwd(d, a.M, a.N, a.x, a.ldx, a.target, a.ignore_index, a.loss, NULL, b->stream);
}

/* Times reps launches (after the warm-up), each between its own events.  A
   kite error is returned (after draining the stream); a CUDA error is fatal. */
static kite_status time_it(struct bench *b, const struct shape *s, enum how how, const char *variant,
                           struct timing *t)
{
  int set = 0;
  kite_status st = KITE_OK;
  for (int i = 0; i < b->o.warmup && st == KITE_OK; i++, set = (set + 1) % b->nsets)
    st = launch(b, s, how, variant, set);
  for (int i = 0; i < b->o.reps && st == KITE_OK; i++, set = (set + 1) % b->nsets) {
    CUDA_CHECK(cudaEventRecord(b->ev[2 * i], b->stream));
    st = launch(b, s, how, variant, set);
    CUDA_CHECK(cudaEventRecord(b->ev[2 * i + 1], b->stream));
  }
  /* A kite error can hide a CUDA one (a failed launch): check both. */
  cudaError_t e = cudaStreamSynchronize(b->stream);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess)
    die("CUDA error while timing %s N=%lld (%s): %s (%s)", s->op, (long long)s->N,
        how == VIA_COPY ? "copy" : variant ? variant : "dispatch", cudaGetErrorName(e), cudaGetErrorString(e));
  if (st != KITE_OK) return st;
  for (int i = 0; i < b->o.reps; i++)
    CUDA_CHECK(cudaEventElapsedTime(&b->ms[i], b->ev[2 * i], b->ev[2 * i + 1]));
  *t = timing_of(b->ms, b->o.reps);
  return KITE_OK;
}

/* ---- which variant ----------------------------------------------------------------- */

/* The runtime's alignment rule: lowest set bit of every pointer and byte stride, capped at 16. */
static int32_t align_of(const kite_row_args *a, int es)
{
  uint64_t bits = 16 | (uint64_t)(uintptr_t)a->x | (uint64_t)(uintptr_t)a->y | (uint64_t)(uintptr_t)a->w |
                  (uint64_t)(a->ldx * es) | (uint64_t)(a->y ? a->ldy * es : 0);
  return (int32_t)(bits & (~bits + 1));
}

static int accepts(const kite_variant_info *v, const char *op, kite_dtype d, int64_t n, int32_t align)
{
  return strcmp(v->op, op) == 0 && v->dtype == d && n >= v->n_min && n <= v->n_max &&
         v->align > 0 && align % v->align == 0;
}

/* The variant dispatch picks for s, written to out: kite_explain's choice
   when the buffers are 16-byte aligned (what explain assumes), else the only
   accepting variant if there is one, else "?". */
static void dispatched(const struct bench *b, const struct shape *s, char *out, size_t len)
{
  char text[EXPLAIN_LEN] = "";
  kite_row_args a = row_args(b, s, 0);
  int32_t align = align_of(&a, b->es);
  const char *best = NULL;
  int fits = 0;
  int32_t nv = kite_variant_count();
  if (align >= 16) {
    kite_status st = kite_explain(s->op, b->o.dtype, s->M, s->N, 0, text, sizeof text);
    if (st != KITE_OK) {
      snprintf(out, len, "? (explain: %s)", kite_status_str(st));
      return;
    }
  }
  for (int32_t i = 0; i < nv; i++) {
    kite_variant_info v;
    if (kite_variant_get(i, &v) != KITE_OK) continue;
    if (!accepts(&v, s->op, b->o.dtype, s->N, align)) continue;
    fits++;
    if (align >= 16 && has_word(text, v.name) && (!best || strlen(v.name) > strlen(best))) best = v.name;
  }
  if (align < 16 && fits == 1) {
    for (int32_t i = 0; i < nv; i++) {
      kite_variant_info v;
      if (kite_variant_get(i, &v) == KITE_OK && accepts(&v, s->op, b->o.dtype, s->N, align)) best = v.name;
    }
  }
  snprintf(out, len, "%s", best ? best : "?");
}

/* ---- output -------------------------------------------------------------------------- */

static double bytes_moved(const struct bench *b, const struct shape *s)
{
  double mn = (double)s->M * (double)s->N * b->es;
  if (strcmp(s->op, "rmsnorm") == 0) return 2 * mn + (double)s->N * b->es;
  if (strcmp(s->op, "layernorm") == 0) return 2 * mn + 2.0 * (double)s->N * b->es;   /* x, y; w and b */
  if (strcmp(s->op, "softmax") == 0) return 2 * mn;
  if (strcmp(s->op, "softmax_bwd") == 0) return 3 * mn;   /* y and dy read, dx written */
  if (strcmp(s->op, "rmsnorm_bwd") == 0)   /* x, dy read, dx written; w, rstd read, dw written */
    return 3 * mn + (double)s->N * (b->es + sizeof(float)) + (double)s->M * sizeof(float);
  if (strcmp(s->op, "layernorm_bwd") == 0)   /* x, dy read, dx written; w, mean, rstd read, dw, db written */
    return 3 * mn + (double)s->N * (b->es + 2 * sizeof(float)) + (double)s->M * 2 * sizeof(float);
  if (strcmp(s->op, "cross_entropy_bwd") == 0) return 2 * mn + (double)s->M * (sizeof(int64_t) + sizeof(float));
  return mn + (double)s->M * (sizeof(int64_t) + sizeof(float));
}

static void print_header(void)
{
  printf("%-13s %-5s %9s %7s %-2s %-42s %10s %7s %9s %6s\n", "op", "dtype", "M", "N", "", "variant",
         "time_us", "TB/s", "copy_TB/s", "ratio");
}

static void report(struct bench *b, const struct shape *s, const char *mark, const char *variant,
                   const char *via, const struct timing *t, const struct timing *copy)
{
  double bytes = bytes_moved(b, s);
  double tbps = bytes / (t->median_us * 1e-6) / 1e12;
  double copy_bytes = 2.0 * (double)s->M * (double)s->N * b->es;
  double copy_tbps = copy_bytes / (copy->median_us * 1e-6) / 1e12;
  printf("%-13s %-5s %9lld %7lld %-2s %-42s %10.1f %7.3f %9.3f %6.3f\n", s->op, dtype_name(b->o.dtype),
         (long long)s->M, (long long)s->N, mark, variant, t->median_us, tbps, copy_tbps, tbps / copy_tbps);
  fflush(stdout);
  if (b->csv) {
    fprintf(b->csv, "%s,%s,%lld,%lld,%s,%s,%d,%.3f,%.3f,%.3f,%.0f,%.5f,%.3f,%.5f,%.5f,%d,%d\n", s->op,
            dtype_name(b->o.dtype), (long long)s->M, (long long)s->N, variant, via,
            strcmp(via, "api") == 0 || mark[0] == '*',
            t->median_us, t->min_us, t->max_us, bytes, tbps, copy->median_us, copy_tbps, tbps / copy_tbps,
            b->nsets, b->o.reps);
    fflush(b->csv);
  }
}

static void report_failure(struct bench *b, const struct shape *s, const char *what, kite_status st)
{
  printf("%-13s %-5s %9lld %7lld    FAILED %s: %s: %s\n", s->op, dtype_name(b->o.dtype), (long long)s->M,
         (long long)s->N, what, kite_status_str(st), kite_last_error());
  fflush(stdout);
  fprintf(stderr, "kite-bench: %s %s N=%lld (%s): %s: %s\n", s->op, dtype_name(b->o.dtype), (long long)s->N,
          what, kite_status_str(st), kite_last_error());
  b->failures++;
  if (st == KITE_ERR_CUDA) die("stopping after a CUDA error inside kite");
}

/* ---- the run ------------------------------------------------------------------------------ */

static void bench_shape(struct bench *b, const struct shape *s)
{
  char chosen[256];
  struct timing copy, t;
  if (uses_targets(s->op)) set_targets(b, s->N, s->M);
  dispatched(b, s, chosen, sizeof chosen);
  time_it(b, s, VIA_COPY, NULL, &copy);

  kite_status st = time_it(b, s, VIA_API, NULL, &t);
  if (st != KITE_OK) report_failure(b, s, "dispatch", st);
  else report(b, s, b->o.variants ? "=" : "", chosen, "api", &t, &copy);
  if (!b->o.variants) return;

  kite_row_args a = row_args(b, s, 0);
  int32_t align = align_of(&a, b->es), nv = kite_variant_count();
  for (int32_t i = 0; i < nv; i++) {
    kite_variant_info v;
    kite_status gs = kite_variant_get(i, &v);
    if (gs != KITE_OK) die("kite_variant_get(%d): %s: %s", (int)i, kite_status_str(gs), kite_last_error());
    if (!accepts(&v, s->op, b->o.dtype, s->N, align)) continue;
    if (b->o.only && fnmatch(b->o.only, v.name, 0) != 0) continue;
    st = time_it(b, s, VIA_VARIANT, v.name, &t);
    if (st != KITE_OK) report_failure(b, s, v.name, st);
    else report(b, s, strcmp(v.name, chosen) == 0 ? "*" : "", v.name, "variant", &t, &copy);
  }
}

static int cmd_rows(struct opts *o)
{
  struct bench b;
  memset(&b, 0, sizeof b);
  b.o = *o;
  b.es = dtype_size(o->dtype);
  if (o->dtype == KITE_E4M3) die("--dtype: row ops take bf16, f16 or f32");
  open_device(&b);
  if (o->csv) {
    b.csv = fopen(o->csv, "w");
    if (!b.csv) die("cannot write %s: %s", o->csv, strerror(errno));
    fprintf(b.csv, "op,dtype,M,N,variant,via,dispatched,median_us,min_us,max_us,bytes,tbps,copy_median_us,"
                   "copy_tbps,ratio_to_copy,buffer_sets,reps\n");
    fflush(b.csv);
  }
  alloc_buffers(&b);

  double set_bytes = 2.0 * (double)b.x_stride;
  printf("# kite-bench: %s, L2 %.1f MiB; dtype %s; M*N = %lld elements; %d buffer sets "
         "(%.2f GiB of x+y, %.1fx L2); warm-up %d, median of %d runs, each timed with its own events\n",
         b.dev.name, (double)b.dev.l2 / (1 << 20), dtype_name(o->dtype), (long long)o->elems, b.nsets,
         b.nsets * set_bytes / (1 << 30), b.nsets * set_bytes / (double)b.dev.l2, o->warmup, o->reps);
  bench_print_dispatch_set();
  printf("# bytes: rmsnorm 2*M*N*e + N*e (w); softmax 2*M*N*e; cross_entropy M*N*e + M*12 "
         "(int64 targets, f32 loss); copy = cudaMemcpyAsync D2D of x, 2*M*N*e; TB/s = 1e12 B/s\n");
  if (o->variants)
    printf("# '=' the public entry point (dispatch); '*' the variant it dispatches to, "
           "run through kite_run_variant\n");
  print_header();
  fflush(stdout);

  for (int i = 0; i < o->nops; i++)
    for (int j = 0; j < o->nns; j++) {
      struct shape s = { o->ops[i], rows_for(&b, o->ns[j]), o->ns[j] };
      bench_shape(&b, &s);
    }

  free_buffers(&b);
  if (b.csv && fclose(b.csv) != 0) die("writing %s failed", o->csv);
  if (b.failures) {
    fprintf(stderr, "kite-bench: %d measurement(s) failed (see FAILED rows)\n", b.failures);
    return 1;
  }
  return 0;
}

/* ---- measured dispatch: --tune and --check-dispatch ----------------------------------------- */

#define TUNE_ELEMS ((int64_t)1 << 26)   /* M*N of each tuned shape: 128 MiB of bf16, > 2x L2 */
/* ...but 1024 rows at the least: at 256 rows of 262144 a cluster row's grid
   holds one row per cluster and loses to streaming, which 1024 rows (a
   vocabulary-sized batch) do not show the same way (session 10). */
#define TUNE_MIN_ROWS 1024
#define CHECK_SHAPES 30

/* --confirm: shape s's fastest (f, at most o.confirm of them) timed again at
   M*N = confirm_elems, where a variant's time per row can differ from the
   tune's rows by a quarter (session 43, the backward ops: their sums over
   rows add a fixed cost per call); their times go to the times file at
   those rows (kg_span.c lets them decide) and their ranking into r and the
   tsv.  0 when the shape has no more rows there or fewer than two variants
   to confirm. */
static int confirm_fastest(struct bench *b, const struct shape *s, const struct ranking *f, struct ranking *r,
                           struct tune_run *run, int k, const char *tail)
{
  const struct shape big = { s->op, b->confirm_elems / s->N, s->N };
  const struct tune_key key = { s->op, b->o.dtype, b->o.dtype, big.M, big.N, 0 };
  const int count = f->n < b->o.confirm ? f->n : b->o.confirm;
  if (big.M <= s->M || count < 2) return 0;
  if (uses_targets(s->op)) set_targets(b, big.N, big.M);
  ranking_init(r, 2);
  for (int i = 0; i < count; i++) {
    struct timing t;
    if (!tune_try(run, k, &key, f->name[i], tail)) continue;
    kite_status st = time_it(b, &big, VIA_VARIANT, f->name[i], &t);
    if (st != KITE_OK) {
      report_failure(b, &big, f->name[i], st);
      tune_line(run->out, &key, NULL, f->name[i], tail);
      continue;
    }
    ranking_add(r, f->name[i], t.median_us);
    times_line(run->out, &key, f->name[i], t.median_us, b->dev.sms);
  }
  tune_line(run->out, &key, r, NULL, tail);
  return 1;
}

/* The fastest variants that accept s (two, or o.confirm with --confirm),
   each timed, ranked into r.  With run (a tune's child, shape k) the shape's
   tsv lines go to the supervisor, each variant announced first; a variant
   that fails is reported and the run goes on; with --confirm the fastest are
   timed again (confirm_fastest) and r holds those times.  With each, every
   variant's time is printed there too.  Returns the rows r was timed at. */
static int64_t time_every_variant(struct bench *b, const struct shape *s, struct ranking *r, struct tune_run *run,
                                  int k, const char *tail, FILE *each)
{
  kite_row_args a = row_args(b, s, 0);
  int32_t align = align_of(&a, b->es), nv = kite_variant_count();
  const struct tune_key key = { s->op, b->o.dtype, b->o.dtype, s->M, s->N, 0 };
  ranking_init(r, b->o.confirm > 2 ? b->o.confirm : 2);
  for (int32_t i = 0; i < nv; i++) {
    kite_variant_info v;
    struct timing t;
    if (kite_variant_get(i, &v) != KITE_OK || !accepts(&v, s->op, b->o.dtype, s->N, align)) continue;
    if (run && !tune_try(run, k, &key, v.name, tail)) continue;
    kite_status st = time_it(b, s, VIA_VARIANT, v.name, &t);
    if (st != KITE_OK) {
      report_failure(b, s, v.name, st);
      if (run) tune_line(run->out, &key, NULL, v.name, tail);
      continue;
    }
    ranking_add(r, v.name, t.median_us);
    if (run) times_line(run->out, &key, v.name, t.median_us, b->dev.sms);
    if (each) fprintf(each, "  variant %-13s %7lld %-44s %10.3f\n", s->op, (long long)s->N, v.name, t.median_us);
  }
  if (run && b->confirm_elems) {
    const struct ranking f = *r;
    if (confirm_fastest(b, s, &f, r, run, k, tail)) return b->confirm_elems / s->N;
  }
  if (run) tune_line(run->out, &key, r, NULL, tail);
  return s->M;
}

/* A bench over the given row lengths, for one dtype, its buffers allocated. */
static void tune_bench(struct bench *b, const struct opts *o, kite_dtype d, const int64_t *ns, int nns)
{
  memset(b, 0, sizeof *b);
  b->o = *o;
  b->o.dtype = d;
  b->o.min_rows = TUNE_MIN_ROWS;
  b->o.nns = nns;
  memcpy(b->o.ns, ns, (size_t)nns * sizeof *ns);
  b->es = dtype_size(d);
  b->confirm_elems = o->confirm > 0 && o->elems > TUNE_ELEMS ? o->elems : 0;
  b->o.elems = b->confirm_elems ? b->confirm_elems : TUNE_ELEMS;   /* the buffers hold the larger shapes */
  open_device(b);
  alloc_buffers(b);
  b->o.elems = TUNE_ELEMS;
}

static const kite_dtype TUNE_DTYPES[] = { KITE_BF16, KITE_F16, KITE_F32 };
#define N_TUNE_DTYPES ((int)(sizeof TUNE_DTYPES / sizeof TUNE_DTYPES[0]))
#define TUNE_NS_MAX 32

/* The tuned row lengths into ns, their count returned: N = 64 ... 262144,
   the powers of two, and from 1024 on the midpoints 1.5 * 2^k too (a row
   just past a power of two no longer fits the variant tuned there: the next
   point decides it, session 6, bench/NOTES.md). */
static int tune_ns(int64_t ns[TUNE_NS_MAX], int64_t from)
{
  int n = 0;
  for (int64_t x = 64; x <= 262144; x *= 2) {
    if (x >= from) ns[n++] = x;
    if (x >= 1024 && x < 262144 && x + x / 2 >= from) ns[n++] = x + x / 2;
  }
  return n;
}

/* The row ops' tune in a supervised child (tune_supervise): shape k is
   (dtype, op, N) in loop order; the shapes before run->from are done. */
static int row_tune_work(struct tune_run *run, void *ctx)
{
  const struct opts *o = ctx;
  int64_t ns[TUNE_NS_MAX];
  const int nns = tune_ns(ns, o->tune_from);
  char tail[512];
  int failures = 0, per_dtype = o->nops * nns;
  for (int di = 0; di < N_TUNE_DTYPES; di++) {
    if ((di + 1) * per_dtype <= run->from) continue;
    if (o->dtype_given && TUNE_DTYPES[di] != o->dtype) continue;   /* shape numbers stay those of every dtype */
    struct bench b;
    tune_bench(&b, o, TUNE_DTYPES[di], ns, nns);
    bench_tune_tail(b.dev.name, tail, sizeof tail);
    if (!run->header_done) {
      fprintf(run->out, "# kite-bench --tune: row ops at M*N = 2^%d (M >= %d), warm-up %d, median of %d; %s\n",
              (int)log2((double)TUNE_ELEMS), TUNE_MIN_ROWS, o->warmup, o->reps, tail);
      if (b.confirm_elems)
        fprintf(run->out, "# each shape's fastest %d timed again at M*N = %lld where that is more rows "
                "(--confirm: those lines decide)\n", o->confirm, (long long)b.confirm_elems);
      fprintf(run->out, "%s\n", TUNE_HEADER);
      tune_done(run, -1);
    }
    for (int i = 0; i < o->nops; i++)
      for (int j = 0; j < nns; j++) {
        const int k = di * per_dtype + i * nns + j;
        struct shape s = { o->ops[i], rows_for(&b, ns[j]), ns[j] };
        struct ranking r;
        if (!tune_shape(run, k)) continue;
        if (uses_targets(s.op)) set_targets(&b, s.N, s.M);
        const int64_t m = time_every_variant(&b, &s, &r, run, k, tail, NULL);
        tune_done(run, k);
        printf("tune %-13s %-4s N=%-7lld %3d variants  best %-44s %9.1f us (M=%lld)\n", s.op,
               dtype_name(TUNE_DTYPES[di]), (long long)s.N, r.seen, r.n ? r.name[0] : "-", r.n ? r.us[0] : 0.0,
               (long long)m);
        fflush(stdout);
      }
    failures += b.failures;
    free_buffers(&b);
  }
  return failures ? 1 : 0;
}

/* --tune FILE: every op (or those of --op), dtype and N of the tuning grid (64 ... 262144) at M*N =
   2^26; every variant that accepts the shape is timed; the fastest two go to
   FILE (kg_tune.c's format), with a line per failed variant.  The timing runs
   in child processes (tune_supervise): a variant that faults or hangs is
   recorded as failed and the tune goes on. */
static int cmd_tune(const struct opts *o, const char *path, const char *times_path)
{
  FILE *tsv = fopen(path, "w"), *times = times_path ? fopen(times_path, "w") : NULL;
  if (!tsv) die("cannot write %s: %s", path, strerror(errno));
  if (times_path && !times) die("cannot write %s: %s", times_path, strerror(errno));
  if (times) fprintf(times, "%s\n", TIMES_HEADER);
  int rc = tune_supervise(tsv, times, row_tune_work, (void *)o);
  if (fclose(tsv) != 0) die("writing %s failed", path);
  if (times && fclose(times) != 0) die("writing %s failed", times_path);
  if (rc < 0) die("tune: stopped early; %s holds the shapes measured so far", path);
  printf("tune: wrote %s (%s)\n", path, rc ? "with failed variants" : "every variant measured");
  return 0;
}

/* --check-dispatch: CHECK_SHAPES random row lengths per op (log-uniform in
   [64, 16384], not powers of two), bf16; the dispatched variant's time against
   the best variant measured for that shape in the same run. */
static int cmd_check_dispatch(const struct opts *o)
{
  int64_t ns[CHECK_SHAPES];
  uint64_t seed = o->seed;
  for (int i = 0; i < CHECK_SHAPES; i++) {
    do ns[i] = (int64_t)log_uniform(&seed, 6.0, 14.0) & (o->aligned ? ~(int64_t)7 : ~(int64_t)0);
    while ((ns[i] & (ns[i] - 1)) == 0);
  }
  struct bench b;
  tune_bench(&b, o, KITE_BF16, ns, CHECK_SHAPES);
  double log_sum = 0, worst = 0;
  int count = 0;
  bench_print_dispatch_set();
  printf("%-13s %7s %9s %-44s %10s %-44s %10s %6s\n", "op", "N", "M", "dispatched", "time_us", "best", "time_us",
         "ratio");
  for (int i = 0; i < N_ALL_OPS; i++)
    for (int j = 0; j < CHECK_SHAPES; j++) {
      struct shape s = { ALL_OPS[i], rows_for(&b, ns[j]), ns[j] };
      char chosen[256];
      struct timing t;
      struct ranking r;
      ranking_init(&r, 2);
      if (uses_targets(s.op)) set_targets(&b, s.N, s.M);
      dispatched(&b, &s, chosen, sizeof chosen);
      kite_status st = time_it(&b, &s, VIA_API, NULL, &t);
      if (st == KITE_OK) time_every_variant(&b, &s, &r, NULL, 0, NULL, o->variants ? stdout : NULL);
      if (st != KITE_OK || r.n == 0) {
        report_failure(&b, &s, "dispatch", st);
        continue;
      }
      const double ratio = t.median_us / r.us[0];
      log_sum += log(ratio);
      worst = ratio > worst ? ratio : worst;
      count++;
      printf("%-13s %7lld %9lld %-44s %10.1f %-44s %10.1f %6.3f\n", s.op, (long long)s.N, (long long)s.M, chosen,
             t.median_us, r.name[0], r.us[0], ratio);
      fflush(stdout);
    }
  printf("check-dispatch: %d shapes, geomean dispatched/best %.3f, worst %.3f (targets <= 1.05, <= 1.20)\n", count,
         count ? exp(log_sum / count) : 0.0, worst);
  free_buffers(&b);
  return b.failures ? 1 : 0;
}

int main(int argc, char **argv)
{
  struct opts o;
  memset(&o, 0, sizeof o);
  o.dtype = KITE_BF16;
  for (int i = 0; i < N_ALL_OPS; i++) o.ops[i] = ALL_OPS[i];
  o.nops = N_ALL_OPS;
  o.nns = (int)(sizeof DEFAULT_NS / sizeof DEFAULT_NS[0]);
  memcpy(o.ns, DEFAULT_NS, sizeof DEFAULT_NS);
  o.elems = (int64_t)1 << 28;
  o.warmup = -1;
  o.reps = -1;
  o.seed = 0xc4ecd15aULL;
  o.confirm = -1;
  const char *tune = NULL, *times = NULL;
  int check = 0;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--explain") == 0) {
      if (i != 1) die("--explain must come first");
      return cmd_explain(argc - 2, argv + 2);
    } else if (strcmp(a, "--list") == 0) {
      return cmd_list();
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "rows") == 0 && i == 1) {
      continue;
    } else if (strcmp(a, "gemm") == 0 && i == 1) {
      return cmd_gemm(argc - 1, argv + 1);
    } else if (strcmp(a, "--dtype") == 0) {
      const char *v = need_arg(argc, argv, &i);
      if (!parse_dtype(v, &o.dtype) || o.dtype == KITE_E4M3) die("--dtype: want bf16, f16 or f32, not '%s'", v);
      o.dtype_given = 1;
    } else if (strcmp(a, "--op") == 0) {
      parse_ops(&o, need_arg(argc, argv, &i));
    } else if (strcmp(a, "--n") == 0) {
      parse_ns(&o, need_arg(argc, argv, &i));
    } else if (strcmp(a, "--elems") == 0) {
      o.elems = parse_count(need_arg(argc, argv, &i), "--elems");
      if (o.elems > ((int64_t)1 << 34)) die("--elems: at most 2^34");
    } else if (strcmp(a, "--only") == 0) {
      o.only = need_arg(argc, argv, &i);
    } else if (strcmp(a, "--variants") == 0) {
      o.variants = 1;
    } else if (strcmp(a, "--quick") == 0) {
      o.quick = 1;
    } else if (strcmp(a, "--warmup") == 0) {
      o.warmup = parse_int(need_arg(argc, argv, &i), "--warmup", 0, 10000);
    } else if (strcmp(a, "--reps") == 0) {
      o.reps = parse_int(need_arg(argc, argv, &i), "--reps", 1, 10000);
    } else if (strcmp(a, "--device") == 0) {
      o.device = parse_int(need_arg(argc, argv, &i), "--device", 0, 1023);
    } else if (strcmp(a, "--csv") == 0) {
      o.csv = need_arg(argc, argv, &i);
    } else if (strcmp(a, "--tune") == 0) {
      tune = need_arg(argc, argv, &i);
    } else if (strcmp(a, "--from") == 0) {
      o.tune_from = parse_count(need_arg(argc, argv, &i), "--from");
      if (o.tune_from > 262144) die("--from: the grid ends at N = 262144");
    } else if (strcmp(a, "--confirm") == 0) {
      o.confirm = parse_int(need_arg(argc, argv, &i), "--confirm", 0, RANKING_MAX);
    } else if (strcmp(a, "--times") == 0) {
      times = need_arg(argc, argv, &i);
    } else if (strcmp(a, "--check-dispatch") == 0) {
      check = 1;
    } else if (strcmp(a, "--aligned") == 0) {
      o.aligned = 1;
    } else if (strcmp(a, "--seed") == 0) {
      o.seed = (uint64_t)parse_count(need_arg(argc, argv, &i), "--seed");
    } else {
      fprintf(stderr, "kite-bench: unknown argument '%s'\n\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (o.warmup < 0) o.warmup = o.quick ? 2 : 5;
  if (o.reps < 0) o.reps = o.quick ? 10 : 50;
  if ((times || o.tune_from || o.confirm >= 0) && !tune) {
    fprintf(stderr, "kite-bench: --times, --from and --confirm go with --tune\n\n");
    usage(stderr);
    return 2;
  }
  if (o.confirm < 0) o.confirm = tune ? 3 : 0;
  if (o.only && (!o.variants || tune || check)) {
    fprintf(stderr, "kite-bench: --only goes with --variants (not with --tune or --check-dispatch)\n\n");
    usage(stderr);
    return 2;
  }
  if (tune) return cmd_tune(&o, tune, times);
  if (check) return cmd_check_dispatch(&o);
  return cmd_rows(&o);
}
