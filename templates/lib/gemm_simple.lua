-- lib/gemm_simple.lua: the alignment-free gemm kind.  C = alpha * A * B^T +
-- beta * C for A (M x K), B (N x K) and C (M x N) row-major with any 2-byte
-- aligned pointers and any row strides: predicated loads from global memory,
-- double-buffered shared tiles, ldmatrix and mma.sync, f32 accumulation.
local dtypes = require "lib.dtypes"
local ptx = require "lib.ptx"
local mma = require "lib.mma"

local M = {}

-- The CTA tiles built, and how their warps split them: 128x128 in 2x4 warps
-- of 64x32 (big problems), 64x64 in 2x2 warps of 32x32 (small ones: more CTAs).
local SHAPES = {
  ["128x128"] = { warps_m = 2, warps_n = 4 },
  ["64x64"] = { warps_m = 2, warps_n = 2 },
}

local function shape(p) return SHAPES[p.tile_m .. "x" .. p.tile_n] end

-- Axes this kind does not use are pinned: stages = 2 (the double buffer),
-- one warpgroup axis value, no clusters, one schedule.
function M.valid(p)
  if not shape(p) then return false, "tile shape" end
  return p.stages == 2 and p.wg == 1 and p.cluster == "1x1" and p.sched == "coop"
end

function M.name(p)
  return string.format("gemm_simple_%s_%s_%dx%d", p.ab, p.c, p.tile_m, p.tile_n)
end

function M.meta(p)
  -- eff: the dispatched simple variant ran at 0.12-0.41 of the best tma
  -- variant (RESULTS.md), so it is picked only where no tma variant fits;
  -- the 64x64 tile, not measured on its own, is assumed to reuse less
  local eff = p.tile_m * p.tile_n >= 128 * 128 and 200 or 120
  return { n_min = 1, n_max = 0x7fffffff, align = dtypes[p.ab].size, rank = 10,
           tile_m = p.tile_m, tile_n = p.tile_n, eff = eff, dtype = p.ab, dtype_out = p.c }
end

-- The kernel and its launcher: the same text for every variant, after the
-- variant's constants.
M.KERNEL = [=[
constexpr int kTileK = 32;                        // k per shared tile: two mma k-steps
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWarpM = kTileM / kWarpsM;          // a warp's output tile
constexpr int kWarpN = kTileN / kWarpsN;
constexpr int kFragsM = kWarpM / 16;              // its 16x8 mma tiles
constexpr int kFragsN = kWarpN / 8;
constexpr int kChunk = 8;                         // elements a thread moves at a time (16 bytes)
constexpr int kRowChunks = kTileK / kChunk;
// Shared row pitch in elements: 80 bytes puts the 8 rows one ldmatrix matrix
// reads in 8 different 16-byte bank groups.
constexpr int kPitch = kTileK + 8;
constexpr int kChunksA = kTileM * kRowChunks / kThreads;   // chunks per thread per tile
constexpr int kChunksB = kTileN * kRowChunks / kThreads;
constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridY = 65535;              // more M tiles: CTAs loop over them
static_assert(kWarpM % 16 == 0 && kFragsN % 2 == 0, "warp tile: 16-row A and 16-column B ldmatrix blocks");
static_assert(kChunksA * kThreads == kTileM * kRowChunks && kChunksB * kThreads == kTileN * kRowChunks,
              "tiles split evenly over the threads");

typedef uint16_t tile_t[kPitch];   // one shared tile row: A and B elements as raw bits

// One operand, A (M x K) or B (N x K), as its rows of raw 16-bit elements.
// width: the widest access (bytes) every in-bounds chunk start allows.
struct operand_t {
  const uint16_t *p;
  int64_t rows, ld;
  int width;
};

__device__ __forceinline__ operand_t operand(const void *p, int64_t rows, int64_t ld)
{
  // chunk starts are p + row * ld + a multiple of 8 elements
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const int width = (a % 16 == 0 && ld % 8 == 0) ? 16 : (a % 4 == 0 && ld % 2 == 0) ? 4 : 2;
  return { static_cast<const uint16_t *>(p), rows, ld, width };
}

__device__ __forceinline__ uint32_t pack(uint16_t lo, uint16_t hi) { return lo | (uint32_t)hi << 16; }

// The 8 elements at src, all in bounds, in accesses of `width` bytes.
__device__ __forceinline__ uint4 load_chunk(const uint16_t *src, int width)
{
  if (width == 16) return __ldg(reinterpret_cast<const uint4 *>(src));
  uint32_t w[4];
  if (width == 4) {
    const uint32_t *s = reinterpret_cast<const uint32_t *>(src);
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = __ldg(s + j);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = pack(__ldg(src + 2 * j), __ldg(src + 2 * j + 1));
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Elements k .. k + 7 of a row, one by one; those outside the matrix are zero.
__device__ __forceinline__ uint4 load_chunk_guarded(const operand_t &op, int64_t row, int64_t k, int64_t K)
{
  uint16_t e[kChunk] = {};
  if (row < op.rows) {
    const uint16_t *src = op.p + row * op.ld;
#pragma unroll
    for (int j = 0; j < kChunk; ++j)
      if (k + j < K) e[j] = __ldg(src + k + j);
  }
  return make_uint4(pack(e[0], e[1]), pack(e[2], e[3]), pack(e[4], e[5]), pack(e[6], e[7]));
}

// This thread's chunks of the tile rows [row0, row0 + kRows) x [k0, k0 + kTileK)
// of op: chunk i is chunk c = threadIdx.x + i * kThreads of the tile, in row
// c / kRowChunks at k (c % kRowChunks) * kChunk.  A tile wholly inside the
// matrix takes the wide path; a tail tile goes element by element.
template <int kRows, int kN>
__device__ __forceinline__ void load_tile(uint4 (&v)[kN], const operand_t &op, int64_t row0, int64_t k0, int64_t K)
{
  const bool inside = row0 + kRows <= op.rows && k0 + kTileK <= K;
#pragma unroll
  for (int i = 0; i < kN; ++i) {
    const int c = threadIdx.x + i * kThreads;
    const int64_t row = row0 + c / kRowChunks, k = k0 + (c % kRowChunks) * kChunk;
    v[i] = inside ? load_chunk(op.p + row * op.ld + k, op.width) : load_chunk_guarded(op, row, k, K);
  }
}

// The chunks load_tile fetched, into the same places of a shared tile.
template <int kN>
__device__ __forceinline__ void store_tile(tile_t *s, const uint4 (&v)[kN])
{
#pragma unroll
  for (int i = 0; i < kN; ++i) {
    const int c = threadIdx.x + i * kThreads;
    *reinterpret_cast<uint4 *>(&s[c / kRowChunks][(c % kRowChunks) * kChunk]) = v[i];
  }
}

// acc += the warp's kWarpM x kWarpN tile over one shared k-tile; a and b point
// at the warp's first rows of the A and B tiles.  Fragments (PTX ISA,
// m16n8k16, g = lane / 4, t = lane % 4):
//   A 16x16: a[0] (g, 2t..2t+1)  a[1] (g+8, 2t..)  a[2] (g, 2t+8..)  a[3] (g+8, 2t+8..)
//            = ldmatrix matrices rows 0-7|8-15 x k 0-7|8-15: lane l gives
//              row l % 16, k (l / 16) * 8
//   B 16x8 (k x n; B's row n is column n):  b[0] (k 2t..2t+1, n g)  b[1] (k 2t+8.., n g)
//            = ldmatrix matrices of B rows n 0-7 x k 0-7, then k 8-15; one
//              x4 serves two n8 tiles: lane l gives row (l / 16) * 8 + l % 8,
//              k (l / 8 % 2) * 8, so r[0], r[1] are the first tile's b, r[2], r[3] the next's
//   C 16x8:  d[0], d[1] (g, 2t..2t+1)  d[2], d[3] (g+8, 2t..2t+1)
__device__ __forceinline__ void mma_tile(float (&acc)[kFragsM][kFragsN][4], const tile_t *a, const tile_t *b,
                                         int lane)
{
#pragma unroll
  for (int ks = 0; ks < kTileK; ks += 16) {
    uint32_t af[kFragsM][4], bf[kFragsN][2];
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) ldmatrix_x4(af[i], &a[i * 16 + lane % 16][ks + lane / 16 * 8]);
#pragma unroll
    for (int j = 0; j < kFragsN; j += 2) {
      uint32_t r[4];
      ldmatrix_x4(r, &b[j * 8 + lane / 16 * 8 + lane % 8][ks + lane / 8 % 2 * 8]);
      bf[j][0] = r[0]; bf[j][1] = r[1];
      bf[j + 1][0] = r[2]; bf[j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) mma_16816(acc[i][j], af[i], bf[j]);
  }
}

// C = alpha * acc + beta * C for the warp's tile at (row0, col0), element by
// element (C's rows may have any alignment); beta == 0 never reads C.
__device__ __forceinline__ void store_c(const kite_gemm_args &a, const float (&acc)[kFragsM][kFragsN][4],
                                        int64_t row0, int64_t col0, int lane)
{
  c_t *C = static_cast<c_t *>(a.C);
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t row = row0 + i * 16 + g + e / 2 * 8, col = col0 + j * 8 + 2 * t + e % 2;
        if (row >= a.M || col >= a.N) continue;
        c_t *p = C + row * a.ldc + col;
        float v = a.alpha * acc[i][j][e];
        if (a.beta != 0.f) v = fmaf(a.beta, c_to_f32(*p), v);
        *p = f32_to_c(v);
      }
}

// One CTA per kTileM x kTileN tile of C: blockIdx.x picks the N tile, and the
// CTA walks M tiles blockIdx.y, + gridDim.y, ...  Each k-tile goes global ->
// registers -> shared; the next one's global loads are in flight while the
// warps multiply the current one.
__global__ void __launch_bounds__(kThreads) gemm_simple(const kite_gemm_args a)
{
  __shared__ __align__(16) tile_t sa[2][kTileM];
  __shared__ __align__(16) tile_t sb[2][kTileN];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const operand_t A = operand(a.A, a.M, a.lda), B = operand(a.B, a.N, a.ldb);
  const int64_t col0 = (int64_t)blockIdx.x * kTileN;
  const int64_t m_tiles = (a.M + kTileM - 1) / kTileM, k_tiles = (a.K + kTileK - 1) / kTileK;

  for (int64_t tm = blockIdx.y; tm < m_tiles; tm += gridDim.y) {
    const int64_t row0 = tm * kTileM;
    float acc[kFragsM][kFragsN][4] = {};
    uint4 ra[kChunksA], rb[kChunksB];
    load_tile<kTileM>(ra, A, row0, 0, a.K);
    load_tile<kTileN>(rb, B, col0, 0, a.K);
    store_tile(sa[0], ra);
    store_tile(sb[0], rb);
    __syncthreads();
    // Buffer kt % 2 holds k-tile kt.  The barrier ending iteration kt both
    // publishes k-tile kt + 1 and tells every warp is done reading buffer
    // kt % 2, which iteration kt + 1 then fills.
    for (int64_t kt = 0; kt < k_tiles; ++kt) {
      const int cur = (int)(kt % 2);
      const bool next = kt + 1 < k_tiles;
      if (next) {
        load_tile<kTileM>(ra, A, row0, (kt + 1) * kTileK, a.K);
        load_tile<kTileN>(rb, B, col0, (kt + 1) * kTileK, a.K);
      }
      mma_tile(acc, &sa[cur][warp_m * kWarpM], &sb[cur][warp_n * kWarpN], lane);
      if (next) {
        store_tile(sa[cur ^ 1], ra);
        store_tile(sb[cur ^ 1], rb);
      }
      __syncthreads();
    }
    store_c(a, acc, row0 + warp_m * kWarpM, col0 + warp_n * kWarpN, lane);
  }
}

}  // namespace

extern "C" cudaError_t kite_v_@VARIANT(const void *args, cudaStream_t stream)
{
  const kite_gemm_args *a = static_cast<const kite_gemm_args *>(args);
  if (a->M <= 0 || a->N <= 0) return cudaSuccess;
  const int64_t n_tiles = (a->N + kTileN - 1) / kTileN, m_tiles = (a->M + kTileM - 1) / kTileM;
  if (n_tiles > kMaxGridX) return cudaErrorInvalidValue;
  const dim3 grid((unsigned)n_tiles, (unsigned)(m_tiles < kMaxGridY ? m_tiles : kMaxGridY));
  gemm_simple<<<grid, kThreads, 0, stream>>>(*a);
  return cudaGetLastError();
}
]=]

function M.source(p, variant)
  local s, c = shape(p), dtypes[p.c]
  local head = string.format([[
// gemm, kind simple: C (%s) = alpha * A * B^T + beta * C, A and B %s; any 2-byte aligned operands.
%s
#include "kite.h"

namespace {

typedef %s c_t;
constexpr int kTileM = %d, kTileN = %d;   // the CTA's tile of C
constexpr int kWarpsM = %d, kWarpsN = %d;  // warps along M and N

__device__ __forceinline__ float c_to_f32(c_t v) { return %s; }
__device__ __forceinline__ c_t f32_to_c(float v) { return %s; }
]], p.c, p.ab, dtypes.includes(), c.ctype, p.tile_m, p.tile_n, s.warps_m, s.warps_n, c.to_f32, c.from_f32)
  local kernel = string.gsub(M.KERNEL, "@VARIANT", variant)
  return table.concat({ head, ptx.helpers({ "SMEM" }), mma.helpers(p.ab), kernel }, "\n")
end

return M
