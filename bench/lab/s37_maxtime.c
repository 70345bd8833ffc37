/* Session 37's check of the cluster wait's suspend hint (NOTES Next (session 37) 5): a missed
 * wake-up of NANOSLEEP.SYNCS would cost a launch 1-2 ms now and then, which kite-bench's median
 * hides.  Times every launch of the dispatched layernorm, softmax and layernorm_bwd rows at 64 K,
 * 128 K and 256 K (bf16, M*N = 2^28) with its own events and prints min / median / mean / max
 * and how many launches took 0.5 ms more than the median.
 *   cc -O2 -std=c11 -I runtime -I/usr/local/cuda/include bench/lab/s37_maxtime.c build/libkite.a \
 *      -L/usr/local/cuda/lib64 -lcudart -lstdc++ -lm -lpthread -o build/s37_maxtime
 *   build/s37_maxtime [LAUNCHES]      (default 500) */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>
#include "kite.h"

#define CK(e) do { cudaError_t r_ = (e); if (r_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(r_)); exit(1); } } while (0)

enum { OP_LAYERNORM, OP_SOFTMAX, OP_LAYERNORM_BWD, N_OPS };
static const char *const OP_NAMES[N_OPS] = { "layernorm", "softmax", "layernorm_bwd" };

struct bufs { void *x, *y, *dy, *w, *b; float *mean, *rstd; };

static kite_status launch(int op, int64_t m, int64_t n, const struct bufs *d)
{
  switch (op) {
  case OP_LAYERNORM:
    return kite_layernorm_fwd(KITE_BF16, m, n, d->x, n, d->w, d->b, 1e-5f, d->y, n, d->mean, d->rstd, 0);
  case OP_SOFTMAX:
    return kite_softmax_fwd(KITE_BF16, m, n, d->x, n, d->y, n, 0);
  default:
    return kite_layernorm_bwd(KITE_BF16, m, n, d->x, n, d->w, d->mean, d->rstd, d->dy, n, d->y, n, NULL, NULL, NULL, 0, 0);
  }
}

static int cmp_float(const void *a, const void *b)
{
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Every launch timed alone; the statistics in microseconds. */
static void time_op(int op, int64_t n, const struct bufs *d, int launches)
{
  const int64_t m = ((int64_t)1 << 28) / n;
  float *t = malloc(sizeof *t * (size_t)launches);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 5; ++i) launch(op, m, n, d);
  for (int i = 0; i < launches; ++i) {
    CK(cudaEventRecord(e0, 0));
    const kite_status st = launch(op, m, n, d);
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    if (st != KITE_OK) { printf("%s %lld: kite status %d\n", OP_NAMES[op], (long long)n, (int)st); break; }
    CK(cudaEventElapsedTime(&t[i], e0, e1));
    t[i] *= 1000.f;
  }
  double mean = 0;
  for (int i = 0; i < launches; ++i) mean += t[i] / launches;
  qsort(t, (size_t)launches, sizeof *t, cmp_float);
  const float med = t[launches / 2];
  int slow = 0;
  for (int i = 0; i < launches; ++i) slow += t[i] > med + 500.f;
  printf("%-14s N=%-7lld launches %d  min %.1f  median %.1f  mean %.1f  max %.1f us  over median+0.5ms: %d\n",
         OP_NAMES[op], (long long)n, launches, t[0], med, mean, t[launches - 1], slow);
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  free(t);
}

int main(int argc, char **argv)
{
  const int launches = argc > 1 ? atoi(argv[1]) : 500;
  const size_t bytes = ((size_t)1 << 28) * 2, row = (size_t)262144 * 2;
  struct bufs d;
  if (launches < 1) { fprintf(stderr, "LAUNCHES must be positive\n"); return 1; }
  CK(cudaMalloc(&d.x, bytes));
  CK(cudaMalloc(&d.y, bytes));
  CK(cudaMalloc(&d.dy, bytes));
  CK(cudaMalloc(&d.w, row));
  CK(cudaMalloc(&d.b, row));
  CK(cudaMalloc((void **)&d.mean, 4 << 18));
  CK(cudaMalloc((void **)&d.rstd, 4 << 18));
  /* 0x3f3f: 0.746 in bf16, every element; finite data is all the timing needs */
  CK(cudaMemset(d.x, 0x3f, bytes));
  CK(cudaMemset(d.dy, 0x3f, bytes));
  CK(cudaMemset(d.w, 0x3f, row));
  CK(cudaMemset(d.b, 0x3f, row));
  CK(cudaMemset(d.mean, 0, 4 << 18));
  CK(cudaMemset(d.rstd, 0x3f, 4 << 18));
  static const int64_t ns[] = { 65536, 131072, 262144 };
  for (int op = 0; op < N_OPS; ++op)
    for (int k = 0; k < 3; ++k) time_op(op, ns[k], &d, launches);
  return 0;
}
