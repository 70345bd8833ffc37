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

struct timing {
  double median_us, min_us, max_us;
};

int cmp_float(const void *a, const void *b);

/* ---- bench/tuned/<gpu>.tsv (read by kite-gen --tuned, gen/kg_tune.c) ---------- */

#define TUNE_HEADER "op\tdtype\tdtype_out\tm\tn\tk\tvariant\ttime_us\trunner_up\trunner_up_us\tdevice\tdate\tcommit"

/* "device<TAB>date<TAB>commit" closing a bench/tuned line: the commit from
   $KITE_COMMIT, else `git rev-parse --short HEAD`, else "unknown". */
void bench_tune_tail(const char *device, char *out, size_t len);

/* The fastest two of a series of timed variants; name[0] is the best.  The
   names are kept, not copied (the variant table's strings live on). */
struct top2 {
  const char *name[2];
  double us[2];
  int n;               /* variants added */
};
void top2_add(struct top2 *t, const char *name, double us);

/* A tuned shape: op, its dtypes, m x n x k (k = 0 for row ops). */
struct tune_key {
  const char *op;
  kite_dtype ab, c;
  int64_t m, n, k;
};
/* The line for key: t's best two (nothing when t is empty), or, with
   failed set, that variant as "failed". */
void tune_line(FILE *f, const struct tune_key *key, const struct top2 *t, const char *failed, const char *tail);

/* The median, min and max of n times in milliseconds (sorts ms). */
struct timing timing_of(float *ms, int n);

#endif
