/* bench_util.h - what kite-bench's row-op benchmark (kite_bench.c) and its
 * gemm benchmark (bench_gemm.c) share: fatal errors, argument parsing,
 * element types, random inputs, opening the device, medians. */
#ifndef KITE_BENCH_UTIL_H
#define KITE_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "kite.h"

#define EXPLAIN_LEN 1024

/* ---- errors ---------------------------------------------------------------- */

/* Prints "kite-bench: <message>" to stderr and exits with status 1. */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* A CUDA error is fatal: after an asynchronous fault the context is unusable. */
#define CUDA_CHECK(call)                                                                    \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess)                                                                  \
      die("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call, cudaGetErrorName(e_),     \
          cudaGetErrorString(e_));                                                          \
  } while (0)

void *xmalloc(size_t n);

/* ---- arguments and element types ------------------------------------------- */

int parse_dtype(const char *s, kite_dtype *d);   /* 1 when s names a dtype */
const char *dtype_name(kite_dtype d);
int dtype_size(kite_dtype d);
int64_t parse_count(const char *s, const char *what);        /* "2^k" or a positive number */
int parse_int(const char *s, const char *what, int lo, int hi);
const char *need_arg(int argc, char **argv, int *i);         /* argv[++*i], or die */

/* Does text contain name as a whole identifier? */
int has_word(const char *text, const char *name);

/* ---- random inputs and host conversions ------------------------------------ */

uint64_t xorshift(uint64_t *s);
/* 2^u for u uniform in [lo, hi): a size drawn log-uniformly (the held-out shapes). */
double log_uniform(uint64_t *s, double lo, double hi);

/* n values uniform in [lo, hi) of dtype d, written to dst. */
void fill_random(void *dst, size_t n, kite_dtype d, float lo, float hi, uint64_t seed);

/* Element i of an array of dtype d (bf16, f16 or f32), as a float. */
float elem_to_f32(kite_dtype d, const void *base, size_t i);

/* ---- device and timing -------------------------------------------------------- */

struct bench_device {
  char name[256];
  size_t l2;      /* bytes; 50 MiB when the device does not say */
  int sms;
};

/* Makes `device` current after checking that it exists and is sm_90, or
   dies with a one-line reason (no GPU, wrong architecture). */
void bench_open_device(int device, struct bench_device *d);

/* The measured set of the table kite dispatches with on the current device,
   as kite_explain words it ("table h100 (device NVIDIA H100 80GB HBM3)"). */
void bench_dispatch_set(char *buf, size_t len);
/* Prints it as the benches' "# dispatch: ..." header line. */
void bench_print_dispatch_set(void);

struct timing {
  double median_us, min_us, max_us;
};

int cmp_float(const void *a, const void *b);

/* ---- bench/tuned/<gpu>.tsv (read by kite-gen --tuned, gen/kg_tune.c) ---------- */

#define TUNE_HEADER "op\tdtype\tdtype_out\tm\tn\tk\tvariant\ttime_us\trunner_up\trunner_up_us\tdevice\tdate\tcommit"

/* "device<TAB>date<TAB>commit" closing a bench/tuned line: the commit from
   $KITE_COMMIT, else `git rev-parse --short HEAD`, else "unknown". */
void bench_tune_tail(const char *device, char *out, size_t len);

/* The fastest of a series of timed variants, fastest first; a tie keeps the
   earlier.  The names are kept, not copied (the variant table's strings live
   on). */
#define RANKING_MAX 8
struct ranking {
  const char *name[RANKING_MAX];
  double us[RANKING_MAX];
  int n;               /* variants kept: the fastest min(seen, cap) */
  int cap;             /* kept at most (1 ... RANKING_MAX) */
  int seen;            /* variants added */
};
/* An empty ranking that keeps the fastest cap (clamped to 1 ... RANKING_MAX). */
void ranking_init(struct ranking *r, int cap);
void ranking_add(struct ranking *r, const char *name, double us);

/* A tuned shape: op, its dtypes, m x n x k (k = 0 for row ops). */
struct tune_key {
  const char *op;
  kite_dtype ab, c;
  int64_t m, n, k;
};
/* The line for key: r's best two (nothing when r is empty), or, with
   failed set, that variant as "failed". */
void tune_line(FILE *f, const struct tune_key *key, const struct ranking *r, const char *failed, const char *tail);

/* bench/tuned/<gpu>.times.tsv: every checked variant's time at each tuned
   gemm shape, on a GPU of `sms` SMs (kite-gen --times fits the gemm cost
   model to it, gen/kg_fit.c).  times_line writes one as the supervisor's
   aux line ("=" first). */
#define TIMES_HEADER "op\tdtype\tdtype_out\tm\tn\tk\tvariant\ttime_us\tsms"
void times_line(FILE *f, const struct tune_key *key, const char *variant, double us, int sms);

/* ---- a tune's supervisor ------------------------------------------------------
   A tune runs in a child process, so that a variant which loses its CUDA
   context (a fault: the bench dies on any CUDA error) or hangs costs its own
   measurement, not the run.  The parent never touches CUDA.  The child writes
   the tsv lines of each shape to run->out between control lines:
     @shape K          shape K (an index in the tune's own order) begins
     @try K LINE       a variant of K runs (until the next control line); LINE is its "failed" line
     @time K           K's variants are timed together (a loss is not one's)
     @done K           K is complete (K = -1: the header lines before the shapes)
     @end RC           the work returned RC
     = LINE            LINE goes to the aux file (kite-bench gemm: every variant's time)
   The parent writes a shape's lines to its files once it is done.  When the
   child dies (a signal, an exit without @end, TUNE_STALL_S seconds silent),
   the variant it was trying goes into the tsv as failed and a new child
   resumes at that shape without it; a loss outside a variant skips the shape
   with a comment line. */
#define TUNE_MAX_SKIP 64

struct tune_run {
  FILE *out;                /* the child's end of the pipe */
  int from;                 /* first shape to run: the shapes before are done */
  int header_done;          /* the lines before the shapes are in the tsv */
  int nskip;                /* variants lost so far, each at its shape */
  struct {
    int shape;
    char variant[128];
  } skip[TUNE_MAX_SKIP];
};
typedef int (*tune_work_fn)(struct tune_run *run, void *ctx);

/* Runs work(run, ctx) in children until it ends, with its lines going to tsv
   and aux (NULL: "=" lines dropped) as above; returns work's result, or -1
   when the tune could not go on. */
int tune_supervise(FILE *tsv, FILE *aux, tune_work_fn work, void *ctx);

/* In the child: shape k begins; 0 when it is already done (skip it). */
int tune_shape(struct tune_run *run, int k);
/* In the child: variant of shape k is about to run; 0 when it was lost before (skip it). */
int tune_try(struct tune_run *run, int k, const struct tune_key *key, const char *variant, const char *tail);
void tune_timing(struct tune_run *run, int k);
void tune_done(struct tune_run *run, int k);

/* ---- launch_clock.c: when a kernel launch was reached -------------------------- */

uint64_t launch_clock_now(void);   /* CLOCK_MONOTONIC in ns */
uint64_t launch_clock_ns(void);    /* launch_clock_now() at this thread's last <<<>>> launch */

/* The median, min and max of n times in milliseconds (sorts ms). */
struct timing timing_of(float *ms, int n);

#endif
