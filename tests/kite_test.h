/* kite_test.h - helpers shared by kite's Check tests (header-only).
 *
 *   kt_seed / kt_rng_for   seeded splitmix64 generator; the run's seed is
 *                          printed once and KITE_TEST_SEED=<n> repeats it
 *   kt_gpu_usable          is there a CUDA device of compute capability 9.0?
 *   kt_f32_to_bf16 ...     host bf16 / f16 <-> float, round-to-nearest-even
 *   kt_out_atol            an output dtype's absolute tolerance (f16 subnormals)
 *   KT_CUDA_CHECK(e)       fails the running Check test on a CUDA error
 *   KT_KITE_OK(e)          fails the running Check test unless e is KITE_OK
 *   KT_ASSERT_HAS(t, p)    (kt_check.h) fails it unless p occurs in t
 *   KT_EXPECT(c, fmt, ...) (kt_check.h) ck_assert_msg for loops over elements
 *
 * Define _POSIX_C_SOURCE before including any header if the file is compiled
 * with -std=c11 (getpid, setenv, clock_gettime need it); this header does it
 * when it comes first. */
#ifndef KITE_TEST_H
#define KITE_TEST_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <check.h>
#include <execinfo.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "kite.h"
#include "kt_check.h"

/* ---- CUDA and kite status checks ---------------------------------------- */

#define KT_CUDA_CHECK(expr)                                                              \
  do {                                                                                   \
    cudaError_t kt_e_ = (expr);                                                          \
    ck_assert_msg(kt_e_ == cudaSuccess, "%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, \
                  #expr, cudaGetErrorName(kt_e_), cudaGetErrorString(kt_e_));            \
  } while (0)

#define KT_KITE_OK(expr)                                                                   \
  do {                                                                                     \
    kite_status kt_s_ = (expr);                                                            \
    ck_assert_msg(kt_s_ == KITE_OK, "%s:%d: %s gave %s: %s", __FILE__, __LINE__, #expr,    \
                  kite_status_str(kt_s_), kite_last_error());                              \
  } while (0)

/* expr must give exactly status want. */
#define KT_KITE_EXPECT(expr, want)                                                             \
  do {                                                                                         \
    kite_status kt_s_ = (expr), kt_w_ = (want);                                                \
    ck_assert_msg(kt_s_ == kt_w_, "%s:%d: %s gave %s, want %s (last error: \"%s\")", __FILE__, \
                  __LINE__, #expr, kite_status_str(kt_s_), kite_status_str(kt_w_),            \
                  kite_last_error());                                                          \
  } while (0)

/* ---- GPU detection ------------------------------------------------------ */

/* 1 if device 0 exists and is compute capability 9.0 (what kite's sm_90a
   code runs on); else 0 with the reason in why. */
/* A crash (CK_NOFORK: it ends the whole binary) prints the stack first, as
   return addresses that `addr2line -f -e <binary>` names. */
static inline void kt_crash(int sig)
{
  void *frames[48];
  const int n = backtrace(frames, 48);
  static const char head[] = "kite tests: crashed; stack:\n";
  if (write(2, head, sizeof head - 1) < 0) { /* nothing more to do */ }
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

static inline void kt_backtrace_on_crash(void)
{
  signal(SIGSEGV, kt_crash);
  signal(SIGBUS, kt_crash);
  signal(SIGABRT, kt_crash);
}

static inline int kt_gpu_usable(char *why, size_t len)
{
  int n = 0, major = 0, minor = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(why, len, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    return 0;
  }
  if (n == 0) {
    snprintf(why, len, "cudaGetDeviceCount found 0 devices");
    return 0;
  }
  e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  if (e != cudaSuccess) {
    snprintf(why, len, "device 0: %s", cudaGetErrorString(e));
    return 0;
  }
  if (major != 9 || minor != 0) {
    snprintf(why, len, "device 0 is sm_%d%d, kite's kernels need sm_90", major, minor);
    return 0;
  }
  snprintf(why, len, "device 0 is sm_90");
  return 1;
}

/* ---- random numbers ------------------------------------------------------ */

typedef struct kt_rng {
  uint64_t s;
  double spare;   /* kt_normal's second value of its last pair, when has_spare */
  int has_spare;
} kt_rng;

static inline uint64_t kt_splitmix(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t kt_u64(kt_rng *r) { return kt_splitmix(&r->s); }

/* Uniform in [0, 1). */
static inline double kt_uniform(kt_rng *r) { return (double)(kt_u64(r) >> 11) * 0x1.0p-53; }

/* Uniform integer in [lo, hi]. */
static inline int64_t kt_range(kt_rng *r, int64_t lo, int64_t hi)
{
  return lo + (int64_t)(kt_u64(r) % (uint64_t)(hi - lo + 1));
}

/* Standard normal (Box-Muller): each pair of uniforms gives two, the second
   kept for the next call (the log and the square root are most of the cost
   of the GPU tests' host data). */
static inline double kt_normal(kt_rng *r)
{
  if (r->has_spare) {
    r->has_spare = 0;
    return r->spare;
  }
  double u = kt_uniform(r), v = kt_uniform(r);
  if (u < 1e-300) u = 1e-300;
  const double m = sqrt(-2.0 * log(u)), a = 6.283185307179586 * v;
  r->spare = m * sin(a), r->has_spare = 1;
  return m * cos(a);
}

/* The run's seed: KITE_TEST_SEED if set, else from the clock and pid.
   Printed on first use so that a failing run can be repeated. */
static inline uint64_t kt_seed(void)
{
  static int have;
  static uint64_t seed;
  if (!have) {
    const char *env = getenv("KITE_TEST_SEED");
    if (env && *env) {
      seed = strtoull(env, NULL, 0);
    } else {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      uint64_t s = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^
                   ((uint64_t)getpid() << 32);
      seed = kt_splitmix(&s) % 1000000000000ull;
    }
    have = 1;
    printf("kite tests: seed %llu (repeat with KITE_TEST_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    fflush(stdout);
  }
  return seed;
}

/* A generator for one test: depends on the run's seed, the tag and i, so a
   test draws the same data whether it runs alone or with the others. */
static inline kt_rng kt_rng_for(const char *tag, int64_t i)
{
  uint64_t h = kt_seed() ^ 0x6a09e667f3bcc908ull;
  for (const char *p = tag; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
  h ^= (uint64_t)i * 0x9e3779b97f4a7c15ull;
  kt_rng r = { kt_splitmix(&h), 0.0, 0 };
  return r;
}

/* ---- bf16 / f16 on the host ------------------------------------------------ */

static inline uint32_t kt_f32_bits(float f)
{
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float kt_bits_f32(uint32_t u)
{
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float kt_bf16_to_f32(uint16_t h) { return kt_bits_f32((uint32_t)h << 16); }

/* Round to nearest, ties to even; NaN stays NaN (quiet), overflow gives inf. */
static inline uint16_t kt_f32_to_bf16(float f)
{
  uint32_t u = kt_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline float kt_f16_to_f32(uint16_t h)
{
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {  /* zero or subnormal: m * 2^-24, exact in float */
    float v = ldexpf((float)m, -24);
    return sign ? -v : v;
  }
  if (e == 31) return kt_bits_f32(sign | 0x7f800000u | (m << 13));
  return kt_bits_f32(sign | ((e - 15 + 127) << 23) | (m << 13));
}

/* Round to nearest, ties to even, with f16 subnormals; overflow gives inf. */
static inline uint16_t kt_f32_to_f16(float f)
{
  uint32_t u = kt_f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a == 0x7f800000u) return (uint16_t)(sign | 0x7c00u);
  uint32_t e = a >> 23;
  if (e >= 113) {  /* |f| >= 2^-14: a normal f16, or inf after rounding */
    uint32_t q = ((e - 112) << 10) | ((a >> 13) & 0x3ffu), rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;
    if (q >= 0x7c00u) q = 0x7c00u;
    return (uint16_t)(sign | q);
  }
  /* subnormal f16 (or zero): units of 2^-24.  f = m * 2^(e - 150) for a
     normal float, so in those units it is m >> (126 - e). */
  if (e < 102) return sign;  /* below 2^-25: rounds to zero */
  uint32_t m = (a & 0x7fffffu) | 0x800000u, s = 126 - e;
  uint32_t q = m >> s, rem = m & ((1u << s) - 1u), half = 1u << (s - 1);
  if (rem > half || (rem == half && (q & 1u))) q++;
  return (uint16_t)(sign | q);
}

/* ---- kite dtypes on the host ------------------------------------------------ */

static inline int kt_dtype_size(kite_dtype d)
{
  switch (d) {
  case KITE_BF16: case KITE_F16: return 2;
  case KITE_F32: return 4;
  case KITE_E4M3: return 1;
  }
  return 0;
}

/* What an output of dtype d cannot hold below its normal range (f16's
   subnormal spacing 2^-24): an absolute tolerance, so that a value that
   cancels to near zero does not fail on its rounding alone. */
static inline double kt_out_atol(kite_dtype d) { return d == KITE_F16 ? 0x1p-24 : 0.0; }

static inline const char *kt_dtype_name(kite_dtype d)
{
  switch (d) {
  case KITE_BF16: return "bf16";
  case KITE_F16: return "f16";
  case KITE_F32: return "f32";
  case KITE_E4M3: return "e4m3";
  }
  return "?";
}

/* Element i of a bf16/f16/f32 buffer, as a float. */
static inline float kt_load(kite_dtype d, const void *buf, int64_t i)
{
  if (d == KITE_F32) {
    float f;
    memcpy(&f, (const char *)buf + 4 * i, 4);
    return f;
  }
  uint16_t h;
  memcpy(&h, (const char *)buf + 2 * i, 2);
  return d == KITE_BF16 ? kt_bf16_to_f32(h) : kt_f16_to_f32(h);
}

/* Stores v rounded to the dtype; returns the value actually stored. */
static inline float kt_store(kite_dtype d, void *buf, int64_t i, float v)
{
  if (d == KITE_F32) {
    memcpy((char *)buf + 4 * i, &v, 4);
    return v;
  }
  uint16_t h = d == KITE_BF16 ? kt_f32_to_bf16(v) : kt_f32_to_f16(v);
  memcpy((char *)buf + 2 * i, &h, 2);
  return d == KITE_BF16 ? kt_bf16_to_f32(h) : kt_f16_to_f32(h);
}

/* ---- allocations freed after each test -------------------------------------- */

/* Tests call kt_dalloc / kt_halloc and kt_free_all in a checked teardown, so a
   failing assertion (which leaves the test early) leaks nothing. */
#define KT_MAX_ALLOCS 256
static void *kt_dev_ptrs[KT_MAX_ALLOCS], *kt_host_ptrs[KT_MAX_ALLOCS];
static int kt_ndev, kt_nhost;

static inline void *kt_dalloc(size_t bytes)
{
  void *p = NULL;
  ck_assert_msg(kt_ndev < KT_MAX_ALLOCS, "too many device allocations in one test");
  KT_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
  kt_dev_ptrs[kt_ndev++] = p;
  return p;
}

static inline void *kt_halloc(size_t bytes)
{
  ck_assert_msg(kt_nhost < KT_MAX_ALLOCS, "too many host allocations in one test");
  void *p = malloc(bytes ? bytes : 1);
  ck_assert_msg(p != NULL, "malloc(%zu) failed", bytes);
  kt_host_ptrs[kt_nhost++] = p;
  return p;
}

static inline void kt_free_all(void)
{
  while (kt_ndev > 0) cudaFree(kt_dev_ptrs[--kt_ndev]);
  while (kt_nhost > 0) free(kt_host_ptrs[--kt_nhost]);
}

/* ---- GPU suites ---------------------------------------------------------------- */

/* Cases added so far (KT_ADD_LOOP counts them): the number a GPU suite
   reports as skipped when there is no GPU. */
static inline int *kt_ncases(void)
{
  static int n;
  return &n;
}

static inline void kt_no_setup(void) {}
static inline void kt_free_teardown(void) { kt_free_all(); }

/* A test case of suite s whose device buffers are freed after each test. */
static inline TCase *kt_gpu_tcase(Suite *s, const char *name)
{
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, kt_no_setup, kt_free_teardown);
  suite_add_tcase(s, tc);
  return tc;
}

#define KT_ADD_LOOP(tc, fn, s, e)           \
  do {                                      \
    tcase_add_loop_test(tc, fn, s, e);      \
    *kt_ncases() += (e) - (s);              \
  } while (0)

#endif
