-- lib/gemm_tma.lua: the TMA + wgmma gemm kind.  C = alpha * A * B^T + beta * C
-- with A (M x K) and B (N x K) K-major, bf16 or f16, C bf16, f16 or f32.
--
-- One persistent CTA per SM walks output tiles (tile_m x tile_n) in groups
-- of kGroupM tile rows, so that neighbouring CTAs share A and B in L2.
-- Warpgroup 0 produces: one thread loads the k-tiles of A and B by TMA into
-- a ring of `stages` shared-memory stages (128-byte swizzle), each with a
-- full barrier (TMA bytes landed) and an empty one (consumers done).  The
-- `wg` consumer warpgroups each own tile_m / wg rows of the tile: wgmma
-- m64nNk16 straight from the stages, f32 accumulators in registers, one
-- wgmma group kept in flight while the next stage is awaited.  The epilogue
-- goes through a small per-warp staging buffer so that rows leave as
-- contiguous 16-element runs (alpha, beta, conversion; C is read only when
-- beta != 0).  TMA zero-fills past M, N and K, so tails need no special
-- loads; the epilogue masks rows and columns.
--
-- Ping-pong (sched "pingpong", two consumers): each consumer takes whole
-- tiles, the CTA's even tiles going to one and odd ones to the other, and
-- their k-loops take turns through two named barriers, so that one
-- consumer's epilogue runs while the other keeps the tensor cores busy.  The
-- turns also keep a consumer from waiting on a stage more than one fill
-- ahead of the last it saw, which the barriers' parity could not tell apart.
--
-- Clusters of two CTAs ("2x1": neighbours along M; "1x2": along N) share the
-- operand tile they have in common: each CTA's producer loads half of it and
-- multicasts that half to both, so the pair reads it from L2 once.  A stage
-- is then free only when the consumers of both CTAs are done with it, so
-- consumers release stages in both CTAs, and a producer waits for its last
-- stages to be released before its CTA may exit.
local dtypes = require "lib.dtypes"
local ptx = require "lib.ptx"
local launch = require "lib.launch"

local M = {}

M.TILE_K = 64          -- one 128-byte swizzle row of 2-byte elements
M.MAX_STAGES = 5
M.SMEM_LIMIT = 227 * 1024
M.EPI_STRIDE = 40      -- floats per staging row: 32 + 8, conflict-free float2 writes
M.GROUP_M = 8          -- tile rows per L2 group

M.MAX_ACC = 128        -- accumulators per consumer thread: the register budget

-- Tile rows each consumer computes: its share (coop) or the whole tile.
function M.wg_rows(p) return p.sched == "pingpong" and p.tile_m or p.tile_m // p.wg end

-- Accumulator registers per consumer thread: its rows in m64 blocks,
-- tile_n / 2 floats per thread per block.
function M.acc(p) return M.wg_rows(p) // 64 * p.tile_n // 2 end

function M.stage_bytes(p) return (p.tile_m + p.tile_n) * M.TILE_K * 2 end
function M.epi_bytes(p) return p.wg * 4 * 16 * M.EPI_STRIDE * 4 end

-- Dynamic shared memory: 1 KB to align the stages to the swizzle atom,
-- the stages, the epilogue staging.
function M.smem(p, stages)
  return 1024 + stages * M.stage_bytes(p) + M.epi_bytes(p)
end

-- The deepest ring that fits (the barriers are static, a few bytes).
function M.stages_for(p)
  for s = M.MAX_STAGES, 2, -1 do
    if M.smem(p, s) + 1024 <= M.SMEM_LIMIT then return s end
  end
  return nil
end

-- CTAs of a cluster along M and along N.
function M.cluster_dims(p)
  local cm, cn = p.cluster:match("^(%d)x(%d)$")
  return tonumber(cm), tonumber(cn)
end

function M.valid(p)
  if p.cluster ~= "1x1" and p.tile_m * p.tile_n < 128 * 256 then
    return false, "clusters only for the largest tiles (where L2 traffic limits)"
  end
  if p.sched == "pingpong" and (p.wg ~= 2 or p.cluster ~= "1x1") then
    return false, "ping-pong: two consumers, one CTA"
  end
  if M.wg_rows(p) % 64 ~= 0 then return false, "each consumer takes whole m64 blocks" end
  if M.acc(p) > M.MAX_ACC then return false, "registers" end
  if not M.stages_for(p) then return false, "shared memory" end
  return p.stages == M.stages_for(p)
end

function M.name(p)
  return string.format("gemm_tma_%s_%s_%dx%dx%d_s%d_wg%d_c%s%s", p.ab, p.c, p.tile_m, p.tile_n,
                       M.TILE_K, p.stages, p.wg, p.cluster, p.sched == "pingpong" and "_pp" or "")
end

-- TMA needs 16-byte aligned operands and row strides.  Any N: the runtime
-- reads the N range of row ops only, but tools that filter by it see all.
local N_ANY = 0x7fffffff

-- What the dispatch heuristic assumes (runtime/kite_gemm.c: a tile costs
-- area x (K + cost_k) / eff).  eff: per-mille throughput of a cooperative
-- single-CTA tile at 8192^3 against the best one, cost_k: the epilogue the
-- schedule leaves exposed, in units of K; both fitted to kite-bench gemm
-- --variants on an H200 (bench/RESULTS.md, session 3 runs 2 and 3).
-- Ping-pong tiles not measured take 90% of the cooperative figure; clusters
-- ran at 0.55-0.72 of the best.
M.EFF = {
  ["128x256"] = 1000, ["256x128"] = 995, ["128x192"] = 975, ["128x128"] = 965, ["64x256"] = 945,
  ["64x192"] = 855, ["64x128"] = 645, ["128x64"] = 620, ["256x64"] = 620, ["64x64"] = 395,
}
M.EFF_PINGPONG = { ["128x128"] = 945, ["64x256"] = 938, ["64x192"] = 870 }
M.EFF_CLUSTER = 600
M.COST_K = { coop = 448, pingpong = 192 }

function M.eff(p)
  local tile = p.tile_m .. "x" .. p.tile_n
  if p.cluster ~= "1x1" then return M.EFF_CLUSTER end
  local coop = M.EFF[tile] or 500
  if p.sched == "pingpong" then return M.EFF_PINGPONG[tile] or coop * 9 // 10 end
  return coop
end

-- Rank: clusters and ping-pong after cooperative single CTAs where the
-- heuristic's costs tie.
function M.meta(p)
  local rank = (p.cluster == "1x1" and p.sched == "coop") and 0 or 1
  return { n_min = 1, n_max = N_ANY, align = 16, rank = rank, tile_m = p.tile_m, tile_n = p.tile_n,
           eff = M.eff(p), cost_k = M.COST_K[p.sched], dtype = p.ab, dtype_out = p.c }
end

-- Registers per thread: what a launch of the CTA gets (a multiple of 8, at
-- most 255), and after setmaxnreg the producer keeps 40 and the consumers
-- share the rest of the 64K-register file.  Moved only when that gives the
-- consumers more (two consumer warpgroups: 168 -> 232).
local function reg_helpers(p)
  local threads = 128 * (p.wg + 1)
  local launch = math.min(65536 // threads, 255)
  launch = launch - launch % 8
  local producer = 40
  local consumer = (65536 // 128 - producer) // p.wg
  consumer = math.min(consumer - consumer % 8, 240)
  if consumer <= launch then
    return "__device__ __forceinline__ void producer_regs() {}\n" ..
           "__device__ __forceinline__ void consumer_regs() {}\n"
  end
  return ptx.setmaxnreg(producer, consumer)
end

local function constants(p)
  local ab, c = dtypes[p.ab], dtypes[p.c]
  local cm, cn = M.cluster_dims(p)
  return string.format([[
typedef %s ab_t;                // A and B
typedef %s c_t;                 // C
constexpr int kTileM = %d, kTileN = %d, kTileK = %d;
constexpr int kClusterM = %d, kClusterN = %d;          // CTAs of a cluster along M, N
constexpr int kCluster = kClusterM * kClusterN;
constexpr int kStages = %d;
constexpr int kConsumers = %d;                     // consumer warpgroups
constexpr bool kPingPong = %s;                  // consumers take turns with whole tiles
constexpr int kWgRows = %d;                        // tile rows per consumer
constexpr int kMBlocks = kWgRows / 64;             // m64 wgmma blocks per consumer
constexpr int kAcc = kTileN / 2;                   // accumulators per thread per block
constexpr int kThreads = 128 * (kConsumers + 1);   // warpgroup 0 produces
constexpr int kGroupM = %d;                        // tile rows per L2 group
constexpr int kABytes = kTileM * kTileK * (int)sizeof(ab_t);
constexpr int kBBytes = kTileN * kTileK * (int)sizeof(ab_t);
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kEpiStride = %d;                     // floats per staging row
constexpr int kEpiWarp = 16 * kEpiStride;          // floats of one warp's staging
constexpr int kSmemBytes = %d;
constexpr int kSwizzle = 128;                      // bytes: one k-tile row
static_assert(kTileK * sizeof(ab_t) == kSwizzle, "a k-tile row is one swizzle row");
static_assert(kABytes %% 1024 == 0 && kStageBytes %% 1024 == 0, "stages on swizzle atoms");
static_assert(kCluster <= 2, "clusters of one or two CTAs");
// Rows of the A and B boxes one TMA load brings: half the tile for the operand
// the cluster shares, multicast to both CTAs (halves on swizzle atoms).
constexpr int kABoxRows = kTileM / kClusterN, kBBoxRows = kTileN / kClusterM;
static_assert(kABoxRows %% 8 == 0 && kBBoxRows %% 8 == 0, "half tiles on swizzle atoms");
]], ab.ctype, c.ctype, p.tile_m, p.tile_n, M.TILE_K, cm, cn, p.stages, p.wg,
    p.sched == "pingpong" and "true" or "false", M.wg_rows(p), M.GROUP_M, M.EPI_STRIDE,
    M.smem(p, p.stages)) .. reg_helpers(p)
end

M.KERNEL = [[
// Kernel parameters besides the two tensor maps.
struct gemm_params {
  int M, N, K;
  int units_m, units_n, k_tiles;   // units: the tiles of one cluster (one tile without clusters)
  float alpha, beta;
  c_t *C;
  int64_t ldc;
  bool c_vec;   // C and its row stride 16-byte aligned: 16-byte stores
};

// This CTA's tile of unit u, units in the grouped order (kGroupM unit rows
// at a time, column by column).  The tile may lie past the matrix when a
// cluster overhangs it: it then loads zeros and stores nothing.
__device__ __forceinline__ void tile_of(const gemm_params &p, int u, uint32_t rank, int &tm, int &tn)
{
  const int per_group = kGroupM * p.units_n;
  const int first = u / per_group * kGroupM;
  const int rows = min(p.units_m - first, kGroupM);
  const int um = first + u % per_group % rows, un = u % per_group / rows;
  tm = um * kClusterM + (kClusterM > 1 ? (int)rank : 0);
  tn = un * kClusterN + (kClusterN > 1 ? (int)rank : 0);
}

// One operand's k-tile: whole, or (Shared: the cluster shares it) this CTA's
// half of it, multicast into both CTAs.
template <bool Shared>
__device__ __forceinline__ void load_operand(uint8_t *dst, const CUtensorMap *map, int x, int y, int half_rows,
                                             uint32_t rank, uint64_t *bar)
{
  if constexpr (Shared)
    tma_load_2d_multicast(dst + rank * half_rows * kSwizzle, map, x, y + (int)rank * half_rows, bar, 0x3);
  else
    tma_load_2d(dst, map, x, y, bar);
}

// The producer: one thread keeps the ring full, kStages k-tiles ahead.
__device__ __forceinline__ void produce(const gemm_params &p, const CUtensorMap *ta, const CUtensorMap *tb,
                                        uint8_t *stages, uint64_t *full, uint64_t *empty, uint32_t rank)
{
  int s = 0;
  uint32_t phase = 1;   // a fresh empty barrier counts as released
  for (int u = blockIdx.x / kCluster; u < p.units_m * p.units_n; u += gridDim.x / kCluster) {
    int tm, tn;
    tile_of(p, u, rank, tm, tn);
    for (int kt = 0; kt < p.k_tiles; ++kt) {
      mbar_wait(&empty[s], phase);
      mbar_arrive_expect_tx(&full[s], kStageBytes);
      uint8_t *st = stages + s * kStageBytes;
      load_operand<(kClusterN > 1)>(st, ta, kt * kTileK, tm * kTileM, kABoxRows, rank, &full[s]);
      load_operand<(kClusterM > 1)>(st + kABytes, tb, kt * kTileK, tn * kTileN, kBBoxRows, rank, &full[s]);
      if (++s == kStages) { s = 0; phase ^= 1; }
    }
  }
  if constexpr (kCluster > 1) {   // the peer still reads and releases stages here: stay until it is done
    for (int i = 0; i < kStages; ++i) {
      mbar_wait(&empty[s], phase);
      if (++s == kStages) { s = 0; phase ^= 1; }
    }
  }
}

// The first tile row consumer w computes.
__device__ __forceinline__ int first_row(int w) { return kPingPong ? 0 : w * kWgRows; }

// One k-tile of this consumer's rows: kMBlocks x 4 wgmma (k16 steps).
__device__ __forceinline__ void mma_stage(float (&acc)[kMBlocks][kAcc], const uint8_t *st, int w, bool first)
{
  const uint64_t db = wgmma_desc_sw128(st + kABytes);
  wgmma_fence();
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb) {
    const uint64_t da = wgmma_desc_sw128(st + (first_row(w) + mb * 64) * kSwizzle);
#pragma unroll
    for (int kk = 0; kk < kTileK / 16; ++kk)
      WGMMA(acc[mb], da + 2 * kk, db + 2 * kk, (first && kk == 0) ? 0 : 1);
  }
  wgmma_commit();
}

// Consumers that release each stage: all, or (ping-pong) the tile's one.
constexpr int kReleasers = kPingPong ? 1 : kConsumers;

// Releases a stage: one arrival per consumer warp, in this CTA and (the
// peer's producer multicasts into it too) in the peer.
__device__ __forceinline__ void release(uint64_t *empty, int s, uint32_t rank)
{
  if (threadIdx.x % 32 != 0) return;
  mbar_arrive(&empty[s]);
  if constexpr (kCluster > 1) mbar_arrive_peer(&empty[s], rank ^ 1);
}

// Writes run v (16 consecutive columns from col of row) as
// alpha * v + beta * C, masked to the matrix.
__device__ __forceinline__ void store_run(const gemm_params &p, int row, int col, float (&v)[16])
{
  if (row >= p.M || col >= p.N) return;
  c_t *dst = p.C + (int64_t)row * p.ldc + col;
  const bool whole = col + 16 <= p.N;
  if (whole && p.c_vec) {
    c_t out[16];
    constexpr int kPer = 16 / sizeof(c_t);   // elements per 16-byte access
#pragma unroll
    for (int q = 0; q < 16 / kPer; ++q) {
      if (p.beta != 0.f) {
        const uint4 old = *reinterpret_cast<const uint4 *>(dst + q * kPer);
        const c_t *o = reinterpret_cast<const c_t *>(&old);
#pragma unroll
        for (int e = 0; e < kPer; ++e) v[q * kPer + e] = fmaf(p.beta, to_f32(o[e]), p.alpha * v[q * kPer + e]);
      } else {
#pragma unroll
        for (int e = 0; e < kPer; ++e) v[q * kPer + e] *= p.alpha;
      }
#pragma unroll
      for (int e = 0; e < kPer; ++e) out[q * kPer + e] = from_f32(v[q * kPer + e]);
      *reinterpret_cast<uint4 *>(dst + q * kPer) = *reinterpret_cast<const uint4 *>(out + q * kPer);
    }
    return;
  }
#pragma unroll
  for (int e = 0; e < 16; ++e) {
    if (col + e >= p.N) break;
    const float y = p.beta != 0.f ? fmaf(p.beta, to_f32(dst[e]), p.alpha * v[e]) : p.alpha * v[e];
    dst[e] = from_f32(y);
  }
}

// The epilogue of one consumer warp: its 16 rows of each m64 block go
// through the warp's staging buffer 32 columns at a time, in the wgmma
// accumulator layout (row lane/4 and +8, columns 8j + 2(lane%4) and +1),
// and leave as two 16-column runs per row.
__device__ __forceinline__ void epilogue(const gemm_params &p, float (&acc)[kMBlocks][kAcc], float *stage,
                                         int tm, int tn, int w)
{
  const int lane = threadIdx.x % 32, wi = threadIdx.x / 32 % 4;
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb) {
    const int row0 = tm * kTileM + first_row(w) + mb * 64 + wi * 16;
#pragma unroll
    for (int sl = 0; sl < kTileN / 32; ++sl) {
      __syncwarp();
#pragma unroll
      for (int jj = 0; jj < 4; ++jj) {
        const int j = sl * 4 + jj, col = jj * 8 + lane % 4 * 2;
        *reinterpret_cast<float2 *>(&stage[lane / 4 * kEpiStride + col]) =
            make_float2(acc[mb][4 * j], acc[mb][4 * j + 1]);
        *reinterpret_cast<float2 *>(&stage[(lane / 4 + 8) * kEpiStride + col]) =
            make_float2(acc[mb][4 * j + 2], acc[mb][4 * j + 3]);
      }
      __syncwarp();
      const int r = lane / 2, c0 = lane % 2 * 16;
      float v[16];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float4 f = *reinterpret_cast<const float4 *>(&stage[r * kEpiStride + c0 + 4 * q]);
        v[4 * q] = f.x; v[4 * q + 1] = f.y; v[4 * q + 2] = f.z; v[4 * q + 3] = f.w;
      }
      store_run(p, row0 + r, tn * kTileN + sl * 32 + c0, v);
    }
  }
}

// Ping-pong turns: named barrier kTurn + w says "consumer w may start its
// next k-loop"; the other consumer arrives on it after its own k-loop, when
// there is a next tile.  Both consumers' 256 threads meet there.
constexpr int kTurn = 1;

// A consumer warpgroup: every tile's k-loop (ping-pong: every other tile's,
// in turn with the other consumer), then its epilogue, while the producer
// already fills the ring for the next tile.
__device__ __forceinline__ void consume(const gemm_params &p, uint8_t *stages, float *epi, uint64_t *full,
                                        uint64_t *empty, int w, uint32_t rank)
{
  float acc[kMBlocks][kAcc];
  int s = 0;
  uint32_t phase = 0;
  float *stage = epi + (w * 4 + threadIdx.x / 32 % 4) * kEpiWarp;
  const int units = p.units_m * p.units_n, step = gridDim.x / kCluster;
  for (int u = blockIdx.x / kCluster, i = 0; u < units; u += step, ++i) {
    if (kPingPong && i % 2 != w) {   // the other consumer's tile: skip its stages
      const int at = s + p.k_tiles;
      phase ^= (uint32_t)(at / kStages) & 1u;
      s = at % kStages;
      continue;
    }
    int tm, tn;
    tile_of(p, u, rank, tm, tn);
    if (kPingPong && i > 0) named_sync(kTurn + w, 256);
    int prev = -1;
    for (int kt = 0; kt < p.k_tiles; ++kt) {
      mbar_wait(&full[s], phase);
      __syncwarp();   // wgmma wants the warp converged
      mma_stage(acc, stages + s * kStageBytes, w, kt == 0);
      if (prev >= 0) {   // the previous k-tile's wgmma group is done: its stage is free
        wgmma_wait<1>();
        release(empty, prev, rank);
      }
      prev = s;
      if (++s == kStages) { s = 0; phase ^= 1; }
    }
    if (kPingPong && u + step < units) named_arrive(kTurn + (w ^ 1), 256);
    wgmma_wait<0>();
    release(empty, prev, rank);
    epilogue(p, acc, stage, tm, tn, w);
  }
}

__global__ void CLUSTER_DIMS __launch_bounds__(kThreads, 1)
gemm_tma(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, const gemm_params p)
{
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kStages], empty[kStages];
  uint8_t *stages = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  float *epi = reinterpret_cast<float *>(stages + kStages * kStageBytes);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kCluster * kReleasers * 4);
    }
    mbar_fence_init();
  }
  // the barriers of every CTA in the cluster are ready before any load lands
  if constexpr (kCluster > 1) cluster_sync(); else __syncthreads();
  const uint32_t rank = kCluster > 1 ? cluster_rank() : 0;
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    producer_regs();
    if (threadIdx.x == 0) produce(p, &ta, &tb, stages, full, empty, rank);
    return;
  }
  consumer_regs();
  consume(p, stages, epi, full, empty, wg - 1, rank);
}
]]

-- How many CTAs (clusters of them) are resident at once: the persistent
-- grid.  One per SM without clusters; with clusters, what the occupancy
-- calculator says fits (an SM pair must share a GPC), once per device.
local RESIDENT = [[
std::atomic<int> clusters_fit[64];

__host__ cudaError_t resident_clusters(int *n)
{
  if constexpr (kCluster == 1) return kite__device_sms(n);
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if (dev < 64 && (*n = clusters_fit[dev].load(std::memory_order_relaxed)) > 0) return cudaSuccess;
  int sms = 0;
  if ((e = kite__device_sms(&sms)) != cudaSuccess) return e;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(sms / kCluster * kCluster);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = kSmemBytes;   // the kernel's own __cluster_dims__ give the cluster
  if ((e = cudaOccupancyMaxActiveClusters(n, gemm_tma, &cfg)) != cudaSuccess) return e;
  if (*n < 1) return cudaErrorInvalidConfiguration;
  if (dev < 64) clusters_fit[dev].store(*n, std::memory_order_relaxed);
  return cudaSuccess;
}
]]

local LAUNCHER = [[
extern "C" cudaError_t kite_v_%s(const void *args, cudaStream_t stream)
{
  const kite_gemm_args *a = static_cast<const kite_gemm_args *>(args);
  // TMA coordinates are 32-bit; so are the kernel's sizes.
  if (a->M > INT_MAX || a->N > INT_MAX || a->K > INT_MAX) return cudaErrorInvalidValue;
  alignas(64) CUtensorMap ta, tb;
  cudaError_t e = kite__tmap_2d(&ta, %s, a->A, a->M, a->K, a->lda, kABoxRows, kTileK, kSwizzle);
  if (e == cudaSuccess) e = kite__tmap_2d(&tb, %s, a->B, a->N, a->K, a->ldb, kBBoxRows, kTileK, kSwizzle);
  int clusters = 0;
  if (e == cudaSuccess) e = raise_smem(gemm_tma, kSmemBytes);
  if (e == cudaSuccess) e = resident_clusters(&clusters);
  if (e != cudaSuccess) return e;
  gemm_params p;
  p.M = (int)a->M; p.N = (int)a->N; p.K = (int)a->K;
  const int tiles_m = (p.M + kTileM - 1) / kTileM, tiles_n = (p.N + kTileN - 1) / kTileN;
  p.units_m = (tiles_m + kClusterM - 1) / kClusterM;
  p.units_n = (tiles_n + kClusterN - 1) / kClusterN;
  p.k_tiles = (p.K + kTileK - 1) / kTileK;
  if ((int64_t)p.units_m * p.units_n > INT_MAX / kCluster) return cudaErrorInvalidValue;
  p.alpha = a->alpha; p.beta = a->beta;
  p.C = static_cast<c_t *>(a->C);
  p.ldc = a->ldc;
  p.c_vec = (reinterpret_cast<uintptr_t>(a->C) | (uintptr_t)(a->ldc * (int64_t)sizeof(c_t))) %% 16 == 0;
  const int units = p.units_m * p.units_n;
  gemm_tma<<<(units < clusters ? units : clusters) * kCluster, kThreads, kSmemBytes, stream>>>(ta, tb, p);
  return cudaGetLastError();
}
]]

-- The whole .cu text of a variant.
function M.source(p, variant)
  local ab, c = dtypes[p.ab], dtypes[p.c]
  local cm, cn = M.cluster_dims(p)
  local dims = cm * cn > 1 and string.format("__cluster_dims__(%d, 1, 1)", cm * cn) or ""
  local kernel = M.KERNEL:gsub("WGMMA", "wgmma_m64n" .. p.tile_n .. "k16"):gsub("CLUSTER_DIMS", dims)
  return table.concat({
    dtypes.includes(),
    "#include <cuda.h>\n#include <limits.h>\n#include <atomic>\n",
    '#include "kite.h"\n#include "kite_launch.h"\n',
    "namespace {\n",
    constants(p),
    "typedef c_t elem_t;\n" .. c.convert(),
    ptx.helpers({ "SMEM", "MBARRIER", "ARRIVE", "TMA", "WGMMA", "NAMED", "CLUSTER", "MULTICAST" }),
    ptx.wgmma(p.tile_n, p.ab),
    kernel,
    launch.raise_smem(),
    RESIDENT,
    "}  // namespace\n",
    string.format(LAUNCHER, variant, ab.kite, ab.kite),
  }, "\n")
end

return M
