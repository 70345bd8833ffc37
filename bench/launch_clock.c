/* launch_clock.c - when a kernel launch is reached: kite-bench's stand-in
 * for cudart's __cudaLaunchKernel, the entry point that the launch code nvcc
 * generates for <<<>>> calls (crt/device_functions.h declares it).  Linked
 * into the executable, it takes the place of cudart's for libkite.a's
 * kernels: it notes the time, then calls cudart's own.  `kite-bench gemm
 * --overhead` reads the time to measure kite_gemm from its call to its
 * launch (bench_util.h: launch_clock_ns). */
#define _GNU_SOURCE   /* RTLD_NEXT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "bench_util.h"

typedef cudaError_t (*launch_fn)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);

static launch_fn real_launch;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static _Thread_local uint64_t last_ns;

static void find_real(void)
{
  real_launch = (launch_fn)dlsym(RTLD_NEXT, "__cudaLaunchKernel");
}

uint64_t launch_clock_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t launch_clock_ns(void) { return last_ns; }

/* cudart's name and signature, so that the launch code of libkite.a finds this one. */
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t smem,
                               cudaStream_t stream)
{
  last_ns = launch_clock_now();
  pthread_once(&real_once, find_real);
  if (!real_launch) return cudaErrorLaunchFailure;
  return real_launch(kernel, grid, block, args, smem, stream);
}
