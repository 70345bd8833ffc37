// kt_gemm_ref.cu - test_gemm's device helpers: data, float64 reference,
// comparison.  See kt_gemm_ref.h.  Written for clarity over speed: the
// reference of the largest shape (7e10 multiply-adds) takes well under a
// second on an H200 in float64, and the test computes it once per shape.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstring>

#include "kt_gemm_ref.h"

namespace {

const int kThreads = 256;

// Blocks for a grid-stride loop over n items.
unsigned blocks_for(int64_t n)
{
  const int64_t b = (n + kThreads - 1) / kThreads;
  return (unsigned)(b < 1 ? 1 : b > 8192 ? 8192 : b);
}

__device__ int elem_size(kite_dtype dt) { return dt == KITE_F32 ? 4 : 2; }

// splitmix64's finaliser: every input bit reaches every output bit.
__device__ uint64_t mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The bits of element [r][c] of the matrix seeded `seed`: uniform in [-1, 1],
// rounded to dt.  A function of (seed, r, c) alone, so that any layout of
// the same matrix holds the same values.
__device__ uint32_t value_bits(kite_dtype dt, uint64_t seed, int64_t r, int64_t c)
{
  const uint64_t z = mix64(seed + (uint64_t)r * 0x9e3779b97f4a7c15ull + (uint64_t)c * 0xd1b54a32d192ed03ull);
  const float v = (float)((double)(z >> 11) * 0x1.0p-52 - 1.0);
  if (dt == KITE_BF16) return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  if (dt == KITE_F16) return __half_as_ushort(__float2half_rn(v));
  return __float_as_uint(v);
}

__device__ double bits_value(kite_dtype dt, uint32_t b)
{
  if (dt == KITE_BF16) return (double)__uint_as_float(b << 16);
  if (dt == KITE_F16) return (double)__half2float(__ushort_as_half((unsigned short)b));
  return (double)__uint_as_float(b);
}

__device__ uint32_t load_bits(kite_dtype dt, const void *base, int64_t e)
{
  if (elem_size(dt) == 4) return ((const uint32_t *)base)[e];
  return ((const uint16_t *)base)[e];
}

__device__ uint32_t poison_bits(kite_dtype dt) { return elem_size(dt) == 4 ? 0xffffffffu : 0xffffu; }

// Is allocation element e inside the matrix?  Its row and column if so.
__device__ bool inside(const kt_mat &m, int64_t e, int64_t *r, int64_t *c)
{
  if (e < m.off) return false;
  *r = (e - m.off) / m.ld;
  *c = (e - m.off) % m.ld;
  return *r < m.rows && *c < m.cols;
}

__device__ uint32_t fill_bits(const kt_mat &m, uint64_t seed, int64_t e)
{
  int64_t r, c;
  if (seed != 0 && inside(m, e, &r, &c)) return value_bits(m.dt, seed, r, c);
  return poison_bits(m.dt);
}

__global__ void fill_kernel(kt_mat m, void *base, uint64_t seed)
{
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m.len; e += (int64_t)gridDim.x * blockDim.x) {
    const uint32_t b = fill_bits(m, seed, e);
    if (elem_size(m.dt) == 4) ((uint32_t *)base)[e] = b;
    else ((uint16_t *)base)[e] = (uint16_t)b;
  }
}

// Adds a thread's count to the block's, then the block's to the total: one
// atomic per block.
__device__ void count_add(unsigned long long n, unsigned long long first, kt_count *out)
{
  __shared__ unsigned long long sn, sfirst;
  if (threadIdx.x == 0) sn = 0, sfirst = ~0ull;
  __syncthreads();
  if (n) {
    atomicAdd(&sn, n);
    atomicMin(&sfirst, first);
  }
  __syncthreads();
  if (threadIdx.x == 0 && sn) {
    atomicAdd(&out->n, sn);
    atomicMin((unsigned long long *)&out->first, sfirst);
  }
}

__global__ void changed_kernel(kt_mat m, const void *base, uint64_t seed, int outside_only, kt_count *out)
{
  unsigned long long n = 0, first = ~0ull;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m.len; e += (int64_t)gridDim.x * blockDim.x) {
    int64_t r, c;
    if (outside_only && inside(m, e, &r, &c)) continue;
    if (load_bits(m.dt, base, e) != fill_bits(m, seed, e)) {
      n++;
      if ((unsigned long long)e < first) first = (unsigned long long)e;
    }
  }
  count_add(n, first, out);
}

__global__ void diff_kernel(const unsigned char *a, const unsigned char *b, int64_t bytes, kt_count *out)
{
  unsigned long long n = 0, first = ~0ull;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < bytes; i += (int64_t)gridDim.x * blockDim.x)
    if (a[i] != b[i]) {
      n++;
      if ((unsigned long long)i < first) first = (unsigned long long)i;
    }
  count_add(n, first, out);
}

// ---- the reference: 64 x 64 outputs per block of 16 x 16 threads, each
// thread 4 x 4 of them; K in steps of 16 through shared memory.  Products of
// bf16/f16 values are exact in float64, and the sums' rounding (2^-53 per
// add) is far below what the test measures.

const int kTile = 64, kStep = 16;

template <kite_dtype DT>
__global__ void ref_kernel(int64_t M, int64_t N, int64_t K, const uint16_t *A, int64_t lda, const uint16_t *B,
                           int64_t ldb, double *ref)
{
  __shared__ double as[kTile][kStep + 1], bs[kTile][kStep + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 16 + tx;
  const int64_t i0 = (int64_t)blockIdx.y * kTile, j0 = (int64_t)blockIdx.x * kTile;
  double acc[4][4] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kStep) {
    for (int s = t; s < kTile * kStep; s += 256) {
      const int row = s / kStep, kk = s % kStep;
      const int64_t k = k0 + kk;
      as[row][kk] = i0 + row < M && k < K ? bits_value(DT, A[(i0 + row) * lda + k]) : 0.0;
      bs[row][kk] = j0 + row < N && k < K ? bits_value(DT, B[(j0 + row) * ldb + k]) : 0.0;
    }
    __syncthreads();
    for (int kk = 0; kk < kStep; kk++) {
      double a[4], b[4];
      for (int u = 0; u < 4; u++) a[u] = as[ty + 16 * u][kk], b[u] = bs[tx + 16 * u][kk];
      for (int u = 0; u < 4; u++)
        for (int v = 0; v < 4; v++) acc[u][v] = fma(a[u], b[v], acc[u][v]);
    }
    __syncthreads();
  }
  for (int u = 0; u < 4; u++)
    for (int v = 0; v < 4; v++) {
      const int64_t i = i0 + ty + 16 * u, j = j0 + tx + 16 * v;
      if (i < M && j < N) ref[i * N + j] = acc[u][v];
    }
}

// ---- the comparison ---------------------------------------------------------

struct err_acc {
  double err2, want2;
  unsigned long long nonfinite, first_nonfinite;
  unsigned long long worst_key;   // ratio's float bits << 32 | element index
  double got, want;
};

__device__ double want_at(const kt_mat &c, const double *ref, double alpha, double beta, uint64_t seed0, int64_t i)
{
  const int64_t r = i / c.cols, col = i % c.cols;
  double w = alpha * ref[i];
  if (seed0) w += beta * bits_value(c.dt, value_bits(c.dt, seed0, r, col));
  return w;
}

__device__ double got_at(const kt_mat &c, const void *base, int64_t i)
{
  const int64_t r = i / c.cols, col = i % c.cols;
  return bits_value(c.dt, load_bits(c.dt, base, c.off + r * c.ld + col));
}

__device__ double warp_sum(double v)
{
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

__global__ void err_kernel(kt_mat c, const void *base, const double *ref, double alpha, double beta, uint64_t seed0,
                           double scale, double atol, err_acc *out)
{
  double e2 = 0, w2 = 0;
  unsigned long long bad = 0, first = ~0ull, key = 0;
  const int64_t n = c.rows * c.cols;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const double got = got_at(c, base, i), want = want_at(c, ref, alpha, beta, seed0, i);
    if (!isfinite(got)) {
      bad++;
      if ((unsigned long long)i < first) first = (unsigned long long)i;
      continue;
    }
    const double err = got - want;
    e2 += err * err;
    w2 += want * want;
    if (scale > 0) {
      const float ratio = (float)(fabs(err) / (fmax(fabs(want), scale) + atol));
      const unsigned long long k = (unsigned long long)__float_as_uint(ratio) << 32 | (uint32_t)i;
      if (k > key) key = k;
    }
  }
  e2 = warp_sum(e2);
  w2 = warp_sum(w2);
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out->err2, e2);
    atomicAdd(&out->want2, w2);
  }
  if (bad) {
    atomicAdd(&out->nonfinite, bad);
    atomicMin(&out->first_nonfinite, first);
  }
  if (key) atomicMax(&out->worst_key, key);
}

// The worst element's values, for the failure message.
__global__ void worst_kernel(kt_mat c, const void *base, const double *ref, double alpha, double beta, uint64_t seed0,
                             err_acc *out)
{
  const int64_t i = (int64_t)(out->worst_key & 0xffffffffull);
  out->got = got_at(c, base, i);
  out->want = want_at(c, ref, alpha, beta, seed0, i);
}

// Runs launch(dev) on a zeroed device T, then copies it back; the first
// CUDA error of the sequence is returned.
template <typename T, typename F>
cudaError_t with_result(T *host, const T &init, F launch)
{
  T *dev = nullptr;
  cudaError_t e = cudaMalloc(&dev, sizeof(T));
  if (e != cudaSuccess) return e;
  e = cudaMemcpy(dev, &init, sizeof(T), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    launch(dev);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(host, dev, sizeof(T), cudaMemcpyDeviceToHost);
  const cudaError_t f = cudaFree(dev);
  return e != cudaSuccess ? e : f;
}

long long first_or_none(unsigned long long f) { return f == ~0ull ? -1 : (long long)f; }

}  // namespace

extern "C" cudaError_t kt_dev_fill(const kt_mat *m, void *base, uint64_t seed)
{
  fill_kernel<<<blocks_for(m->len), kThreads>>>(*m, base, seed);
  const cudaError_t e = cudaGetLastError();
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

extern "C" cudaError_t kt_dev_changed(const kt_mat *m, const void *base, uint64_t seed, int outside_only,
                                      kt_count *out)
{
  const kt_count init = { 0, -1 };   // -1: ~0 as the running minimum
  const cudaError_t e = with_result(out, init, [&](kt_count *d) {
    changed_kernel<<<blocks_for(m->len), kThreads>>>(*m, base, seed, outside_only, d);
  });
  out->first = first_or_none((unsigned long long)out->first);
  return e;
}

extern "C" cudaError_t kt_dev_diff_bytes(const void *a, const void *b, size_t bytes, kt_count *out)
{
  const kt_count init = { 0, -1 };
  const cudaError_t e = with_result(out, init, [&](kt_count *d) {
    diff_kernel<<<blocks_for((int64_t)bytes), kThreads>>>((const unsigned char *)a, (const unsigned char *)b,
                                                          (int64_t)bytes, d);
  });
  out->first = first_or_none((unsigned long long)out->first);
  return e;
}

extern "C" cudaError_t kt_dev_gemm_ref(kite_dtype ab, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                                       const void *B, int64_t ldb, double *ref)
{
  if (ab != KITE_BF16 && ab != KITE_F16) return cudaErrorInvalidValue;
  const dim3 grid((unsigned)((N + kTile - 1) / kTile), (unsigned)((M + kTile - 1) / kTile)), block(16, 16);
  const uint16_t *a = (const uint16_t *)A, *b = (const uint16_t *)B;
  if (ab == KITE_BF16) ref_kernel<KITE_BF16><<<grid, block>>>(M, N, K, a, lda, b, ldb, ref);
  else ref_kernel<KITE_F16><<<grid, block>>>(M, N, K, a, lda, b, ldb, ref);
  const cudaError_t e = cudaGetLastError();
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

extern "C" cudaError_t kt_dev_gemm_err(const kt_mat *c, const void *base, const double *ref, double alpha,
                                       double beta, uint64_t seed0, double scale, double atol, kt_gemm_err *out)
{
  // The worst element is packed with its index in 32 bits.
  if (c->rows * c->cols >= ((int64_t)1 << 32)) return cudaErrorInvalidValue;
  err_acc init = {};
  init.first_nonfinite = ~0ull;
  err_acc r;
  const cudaError_t e = with_result(&r, init, [&](err_acc *d) {
    err_kernel<<<blocks_for(c->rows * c->cols), kThreads>>>(*c, base, ref, alpha, beta, seed0, scale, atol, d);
    worst_kernel<<<1, 1>>>(*c, base, ref, alpha, beta, seed0, d);
  });
  out->err2 = r.err2;
  out->want2 = r.want2;
  out->nonfinite = r.nonfinite;
  out->first_nonfinite = first_or_none(r.first_nonfinite);
  const uint32_t ratio_bits = (uint32_t)(r.worst_key >> 32);
  float ratio;
  memcpy(&ratio, &ratio_bits, sizeof ratio);
  out->worst = r.worst_key ? (double)ratio : 0.0;
  out->worst_at = r.worst_key ? (long long)(r.worst_key & 0xffffffffull) : -1;
  out->worst_got = r.got;
  out->worst_want = r.want;
  return e;
}
