// Row-op lab: the simplest resident-row kernels (row in registers, 16-byte
// loads, compile-time or run-time N) timed against a copy, to find what the
// template's kernels lose.  Not part of the library; see bench/NOTES.md.
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ float lo(uint32_t u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float hi(uint32_t u) { return __uint_as_float(u & 0xffff0000u); }
__device__ __forceinline__ uint32_t pack(float a, float b)
{
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<uint32_t *>(&h);
}
__device__ __forceinline__ float ex2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }

template <int T>
__device__ __forceinline__ float row_reduce(float v, float *red, bool is_max)
{
  for (int o = 16; o; o >>= 1) { float w = __shfl_xor_sync(~0u, v, o); v = is_max ? fmaxf(v, w) : v + w; }
  if constexpr (T > 32) {
    const int r = threadIdx.x / T, w = threadIdx.x % T / 32;
    if (threadIdx.x % 32 == 0) red[r * (T / 32) + w] = v;
    __syncthreads();
    v = red[r * (T / 32)];
    for (int k = 1; k < T / 32; ++k) v = is_max ? fmaxf(v, red[r * (T / 32) + k]) : v + red[r * (T / 32) + k];
  }
  return v;
}

// OP 0 rmsnorm, 1 softmax, 2 cross-entropy.  NC > 0: N is NC at compile time.
template <int OP, int T, int R, int V, int NC>
__global__ void __launch_bounds__(T * R) lab(const __nv_bfloat16 *x, const __nv_bfloat16 *w, __nv_bfloat16 *y,
                                              const int64_t *tgt, float *loss, int M, int Nr)
{
  __shared__ float red[2][R * (T / 32)];
  const int N = NC > 0 ? NC : Nr;
  const int r = threadIdx.x / T, t = threadIdx.x % T;
  const int64_t row = (int64_t)blockIdx.x * R + r;
  if (row >= M) return;   // lab: M is a multiple of R
  const uint4 *xr = reinterpret_cast<const uint4 *>(x + row * N);
  uint4 v[V];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int a = j * T + t;
    if (NC > 0 || a * 8 < N) v[j] = __ldg(xr + a); else v[j] = make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);
  }
  float f[V * 8];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const uint32_t u[4] = { v[j].x, v[j].y, v[j].z, v[j].w };
#pragma unroll
    for (int k = 0; k < 4; ++k) { f[j * 8 + 2 * k] = lo(u[k]); f[j * 8 + 2 * k + 1] = hi(u[k]); }
  }
  if constexpr (OP == 0) {
    float ss = 0.f;
#pragma unroll
    for (int e = 0; e < V * 8; ++e) ss = fmaf(f[e], f[e], (NC > 0 || (e / 8 * T + t) * 8 < N) ? ss : ss);
    // -inf fill squared is inf: the lab's run-time N is a multiple of 8*T, so unused
    ss = row_reduce<T>(ss, red[0], false);
    const float rs = rsqrtf(ss / N + 1e-6f);
    const uint4 *wr = reinterpret_cast<const uint4 *>(w);
    uint4 *yr = reinterpret_cast<uint4 *>(y + row * N);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const int a = j * T + t;
      if (NC == 0 && a * 8 >= N) continue;
      const uint4 wv = __ldg(wr + a);
      const uint32_t wu[4] = { wv.x, wv.y, wv.z, wv.w };
      uint32_t o[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) o[k] = pack(f[j * 8 + 2 * k] * rs * lo(wu[k]), f[j * 8 + 2 * k + 1] * rs * hi(wu[k]));
      yr[a] = make_uint4(o[0], o[1], o[2], o[3]);
    }
  } else {
    float m = f[0];
#pragma unroll
    for (int e = 1; e < V * 8; ++e) m = fmaxf(m, f[e]);
    m = row_reduce<T>(m, red[0], true);
    const float ml = m * 1.4426950408889634f;
    float s = 0.f;
    if constexpr (OP == 1) {
#pragma unroll
      for (int e = 0; e < V * 8; ++e) { f[e] = ex2(fmaf(f[e], 1.4426950408889634f, -ml)); s += f[e]; }
    } else {
#pragma unroll
      for (int e = 0; e < V * 8; ++e) s += ex2(fmaf(f[e], 1.4426950408889634f, -ml));
    }
    s = row_reduce<T>(s, red[1], false);
    if constexpr (OP == 1) {
      const float inv = 1.f / s;
      uint4 *yr = reinterpret_cast<uint4 *>(y + row * N);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const int a = j * T + t;
        if (NC == 0 && a * 8 >= N) continue;
        uint32_t o[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) o[k] = pack(f[j * 8 + 2 * k] * inv, f[j * 8 + 2 * k + 1] * inv);
        yr[a] = make_uint4(o[0], o[1], o[2], o[3]);
      }
    } else if (t == 0) {
      const int64_t c = tgt[row];
      loss[row] = m + logf(s) - __bfloat162float(x[row * N + c]);
    }
  }
}

__global__ void copyk(const uint4 *a, uint4 *b, int64_t n)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) b[i] = a[i];
}

static __nv_bfloat16 *gx, *gw, *gy; static int64_t *gt; static float *gl;
static const int64_t ELEMS = 1 << 28;

template <typename F>
static float timeit(F launch)
{
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) launch();
  std::vector<float> ts;
  for (int i = 0; i < 30; ++i) {
    CK(cudaEventRecord(a)); launch(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

static const char *OPN[] = { "rmsnorm", "softmax", "xent" };

// Checks a few rows against a double reference.
static bool check(int op, int N, int M)
{
  std::vector<__nv_bfloat16> hx((size_t)N), hy((size_t)N), hw((size_t)N);
  CK(cudaMemcpy(hw.data(), gw, N * 2, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int row : { 0, M / 2 + 1, M - 1 }) {
    CK(cudaMemcpy(hx.data(), gx + (int64_t)row * N, N * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hy.data(), gy + (int64_t)row * N, N * 2, cudaMemcpyDeviceToHost));
    if (op == 0) {
      double ss = 0; for (int i = 0; i < N; ++i) { double v = __bfloat162float(hx[i]); ss += v * v; }
      double rs = 1 / sqrt(ss / N + 1e-6);
      for (int i = 0; i < N; ++i) { double r = __bfloat162float(hx[i]) * rs * __bfloat162float(hw[i]); worst = std::max(worst, fabs(r - __bfloat162float(hy[i])) / (fabs(r) + 1e-2)); }
    } else if (op == 1) {
      double m = -1e30, s = 0; for (int i = 0; i < N; ++i) m = std::max(m, (double)__bfloat162float(hx[i]));
      for (int i = 0; i < N; ++i) s += exp(__bfloat162float(hx[i]) - m);
      for (int i = 0; i < N; ++i) { double r = exp(__bfloat162float(hx[i]) - m) / s; worst = std::max(worst, fabs(r - __bfloat162float(hy[i])) / (r + 1e-3 / N)); }
    } else {
      double m = -1e30, s = 0; for (int i = 0; i < N; ++i) m = std::max(m, (double)__bfloat162float(hx[i]));
      for (int i = 0; i < N; ++i) s += exp(__bfloat162float(hx[i]) - m);
      int64_t c; float l; CK(cudaMemcpy(&c, gt + row, 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(&l, gl + row, 4, cudaMemcpyDeviceToHost));
      double r = m + log(s) - __bfloat162float(hx[c]); worst = std::max(worst, fabs(r - l) / (fabs(r) + 1));
    }
  }
  return worst < 2e-2;
}

template <int OP, int T, int R, int V, int NC>
static void one(int N, float copy)
{
  const int M = (int)(ELEMS / N);
  CK(cudaMemset(gy, 0xff, ELEMS * 2)); CK(cudaMemset(gl, 0xff, M * 4));
  auto go = [&] { lab<OP, T, R, V, NC><<<M / R, T * R>>>(gx, gw, gy, gt, gl, M, N); };
  const float ms = timeit(go);
  const double bytes = OP == 2 ? ELEMS * 2.0 + M * 12.0 : ELEMS * 4.0;
  int regs = 0; cudaFuncAttributes at; CK(cudaFuncGetAttributes(&at, lab<OP, T, R, V, NC>)); regs = at.numRegs;
  printf("%-8s N=%6d t%-4d r%d v%d %-8s regs %3d  %7.1f us  %5.2f TB/s  %.2f of copy  %s\n", OPN[OP], N, T, R, V,
         NC ? "constN" : "runN", regs, ms * 1e3, bytes / ms / 1e9, bytes / ms / 1e9 / copy, check(OP, N, M) ? "ok" : "WRONG");
}

__global__ void fill(__nv_bfloat16 *p, int64_t n, uint32_t seed)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed; h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    p[i] = __float2bfloat16((h & 0xffff) / 6553.6f - 5.f);
  }
}
__global__ void filli(int64_t *p, int64_t n, int N)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) p[i] = (i * 7919) % N;
}

#define SET(OP, N) \
  one<OP, 32, 8, 4, N>(N, copy); one<OP, 32, 8, 4, 0>(N, copy); one<OP, 64, 4, 2, N>(N, copy); \
  one<OP, 64, 4, 2, 0>(N, copy); one<OP, 128, 2, 1, N>(N, copy); one<OP, 128, 1, 1, N>(N, copy); one<OP, 64, 2, 2, N>(N, copy);
#define SET4(OP, N) \
  one<OP, 128, 1, 4, N>(N, copy); one<OP, 128, 1, 4, 0>(N, copy); one<OP, 256, 1, 2, N>(N, copy); \
  one<OP, 256, 1, 2, 0>(N, copy); one<OP, 512, 1, 1, N>(N, copy); one<OP, 128, 2, 4, N>(N, copy);
#define SET16(OP, N) \
  one<OP, 512, 1, 4, N>(N, copy); one<OP, 512, 1, 4, 0>(N, copy); one<OP, 1024, 1, 2, N>(N, copy); \
  one<OP, 256, 1, 8, N>(N, copy); one<OP, 256, 1, 8, 0>(N, copy);

// rowlab [OP N]: every configuration, or those of one op (0 rmsnorm, 1 softmax, 2 xent) and N.
int main(int argc, char **argv)
{
  const int only_op = argc > 2 ? atoi(argv[1]) : -1, only_n = argc > 2 ? atoi(argv[2]) : 0;
  CK(cudaMalloc(&gx, ELEMS * 2)); CK(cudaMalloc(&gy, ELEMS * 2)); CK(cudaMalloc(&gw, 262144 * 2));
  CK(cudaMalloc(&gt, (ELEMS / 1024) * 8)); CK(cudaMalloc(&gl, (ELEMS / 1024) * 4));
  fill<<<1024, 256>>>(gx, ELEMS, 1); fill<<<64, 256>>>(gw, 262144, 2);
  CK(cudaDeviceSynchronize());
  const float cms = timeit([] { copyk<<<132 * 16, 256>>>((const uint4 *)gx, (uint4 *)gy, ELEMS / 8); });
  const float copy = ELEMS * 4.0 / cms / 1e9;
  printf("copy kernel: %.2f TB/s\n", copy);
  for (int N : { 1024, 4096, 16384 }) { filli<<<256, 256>>>(gt, ELEMS / N, N); }
  CK(cudaDeviceSynchronize());
#define RUN(S, OP, N) if (only_op < 0 || (only_op == OP && only_n == N)) { S(OP, N) }
  filli<<<256, 256>>>(gt, ELEMS / 1024, 1024); RUN(SET, 0, 1024) RUN(SET, 1, 1024) RUN(SET, 2, 1024)
  filli<<<256, 256>>>(gt, ELEMS / 4096, 4096); RUN(SET4, 0, 4096) RUN(SET4, 1, 4096) RUN(SET4, 2, 4096)
  filli<<<256, 256>>>(gt, ELEMS / 16384, 16384); RUN(SET16, 0, 16384) RUN(SET16, 1, 16384) RUN(SET16, 2, 16384)
  return 0;
}
