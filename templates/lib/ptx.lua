-- lib/ptx.lua: Hopper PTX the templates share, wrapped once in small device
-- helpers: shared-memory addresses, mbarriers with transaction counts, and
-- bulk (TMA, 1-D) copies from global into shared memory.  A template pulls in
-- the helpers it needs by name; the text is the same in every variant.
local M = {}

M.SMEM = [[
// 32-bit shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
  return (uint32_t)__cvta_generic_to_shared(p);
}
]]

M.MBARRIER = [[
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t arrivals)
{
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(arrivals) : "memory");
}

// Makes initialised barriers visible to the async proxy that completes them.
__device__ __forceinline__ void mbar_fence_init()
{
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival that also announces `bytes` more of transactions this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes)
{
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

// Spins until the phase with the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity)
{
  asm volatile("{\n"
               "  .reg .pred done;\n"
               "kite_mbar_wait:\n"
               "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "  @!done bra kite_mbar_wait;\n"
               "}" :: "r"(smem_addr(bar)), "r"(parity) : "memory");
}

// How long a waiting thread may stay suspended in one try (ns). The phase's
// completion wakes it sooner; without the hint the hardware's short default
// has the warp retry dozens of times an exchange, issue slots the SM's other
// rows need (session 35: ~9% of long rows' instructions).
constexpr uint32_t kMbarSuspendNs = 1000000;

// As mbar_wait, acquiring at cluster scope: for bytes that peer CTAs'
// st.async wrote here, counted on this barrier.
__device__ __forceinline__ void mbar_wait_cluster(uint64_t *bar, uint32_t parity)
{
  asm volatile("{\n"
               "  .reg .pred done;\n"
               "kite_mbar_wait_cluster:\n"
               "  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1, %2;\n"
               "  @!done bra kite_mbar_wait_cluster;\n"
               "}" :: "r"(smem_addr(bar)), "r"(parity), "n"(kMbarSuspendNs) : "memory");
}
]]

M.BULK = [[
// Orders this thread's earlier shared-memory accesses before later async-proxy
// writes (a bulk copy into a buffer the CTA has just finished reading).
__device__ __forceinline__ void fence_proxy_async_smem()
{
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global
// to shared memory; completion counts `bytes` of transactions on `bar`.
__device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
]]

M.PREFETCH = [[
// Asks L2 for `bytes` (a multiple of 16) at src (16-byte aligned) and goes on:
// a hint that moves the bytes from HBM while the thread works on other data.
__device__ __forceinline__ void prefetch_l2(const void *src, uint32_t bytes)
{
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(src), "r"(bytes) : "memory");
}
]]

M.ARRIVE = [[
// One plain arrival (a consumer releasing a stage).
__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_addr(bar)) : "memory");
}
]]

M.TMA = [[
// Loads the box at (x, y) (x the contiguous dimension) of the tensor map into
// shared memory; completion counts the box's bytes (zero-filled past the
// tensor's edges, and counted all the same) on `bar`.
__device__ __forceinline__ void tma_load_2d(void *dst, const void *map, int x, int y, uint64_t *bar)
{
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];"
               :: "r"(smem_addr(dst)), "l"(map), "r"(x), "r"(y), "r"(smem_addr(bar)) : "memory");
}
]]

M.WGMMA = [[
// Orders register accesses before the warpgroup's next wgmma reads them.
__device__ __forceinline__ void wgmma_fence()
{
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Waits until at most N committed wgmma groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait()
{
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}

// Shared-memory matrix descriptor of a K-major tile in the 128-byte swizzle:
// rows of 128 bytes, 8-row (1024-byte) swizzle atoms stacked along M/N (the
// stride byte offset), the leading byte offset unused for this layout.  The
// tile must start on a 1024-byte boundary; a k16 step inside the 128-byte
// row adds 32 bytes (2 in the encoded address) to the start.
__device__ __forceinline__ uint64_t wgmma_desc_sw128(const void *tile)
{
  const uint64_t addr = smem_addr(tile);
  return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}
]]

M.NAMED = [[
// Named barrier `id` (1..15; 0 is __syncthreads'): wait until `threads`
// threads, these among them, have come; or only count this warp in.
__device__ __forceinline__ void named_sync(int id, int threads)
{
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void named_arrive(int id, int threads)
{
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(threads) : "memory");
}
]]

M.CLUSTER = [[
// This CTA's rank in its cluster.
__device__ __forceinline__ uint32_t cluster_rank()
{
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every CTA of the cluster meets here.
__device__ __forceinline__ void cluster_sync()
{
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The two halves of cluster_sync, apart: arrive (publishing nothing), and
// later wait until every thread of the cluster has arrived.
__device__ __forceinline__ void cluster_arrive_relaxed()
{
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_wait()
{
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}

// *p = v at p's place in the shared memory of CTA `rank` of the cluster
// (distributed shared memory; a cluster barrier makes it visible there).
__device__ __forceinline__ void st_peer_f32(float *p, uint32_t rank, float v)
{
  asm volatile("{\n"
               "  .reg .b32 remote;\n"
               "  mapa.shared::cluster.u32 remote, %0, %1;\n"
               "  st.shared::cluster.f32 [remote], %2;\n"
               "}" :: "r"(smem_addr(p)), "r"(rank), "f"(v) : "memory");
}

// Orders this thread's earlier memory accesses (a peer's shared memory among
// them) before its later ones, at cluster scope.
__device__ __forceinline__ void fence_cluster()
{
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
}

// *p = v (4 bytes; v2: 8) at p's place in CTA `rank` of the cluster, counted
// as bytes on the barrier at bar's place there: the receiver waits on its own
// barrier, the sender neither fences nor waits.
__device__ __forceinline__ void st_async_peer_f32(float *p, uint32_t rank, float v, uint64_t *bar)
{
  asm volatile("{\n"
               "  .reg .b32 rp, rb;\n"
               "  mapa.shared::cluster.u32 rp, %0, %2;\n"
               "  mapa.shared::cluster.u32 rb, %1, %2;\n"
               "  st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [rp], %3, [rb];\n"
               "}" :: "r"(smem_addr(p)), "r"(smem_addr(bar)), "r"(rank), "r"(__float_as_uint(v)) : "memory");
}

__device__ __forceinline__ void st_async_peer_f32x2(float *p, uint32_t rank, float v0, float v1, uint64_t *bar)
{
  asm volatile("{\n"
               "  .reg .b32 rp, rb;\n"
               "  mapa.shared::cluster.u32 rp, %0, %2;\n"
               "  mapa.shared::cluster.u32 rb, %1, %2;\n"
               "  st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [rp], {%3, %4}, [rb];\n"
               "}" :: "r"(smem_addr(p)), "r"(smem_addr(bar)), "r"(rank), "r"(__float_as_uint(v0)),
                  "r"(__float_as_uint(v1)) : "memory");
}
]]

-- Asynchronous copies of 16 bytes from global into shared memory that hold
-- no registers (cp.async, the thread's own group).
M.ASYNC = [[
// 16 bytes at src into dst (16-byte aligned, shared memory): the first
// `bytes` from src, the rest zero; bytes = 0 reads nothing.  Through L1
// (.ca): the operands copied this way (w, b) are read by every CTA, and
// bypassing L1 (.cg) sends all of them to the same few L2 lines, which then
// serialise (layernorm at N = 1024: 1.42 ms against rmsnorm's 0.29, DRAM 15% busy).
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int bytes)
{
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;"
               :: "r"(smem_addr(dst)), "l"(src), "r"(bytes) : "memory");
}

// This thread's cp.async copies have landed (visible to this thread).
__device__ __forceinline__ void cp_async_wait()
{
  asm volatile("cp.async.wait_all;" ::: "memory");
}
]]

-- Cluster TMA: barrier arrivals on a peer CTA, multicast loads.
M.MULTICAST = [[
// One arrival on the barrier at the same place in CTA `rank` of the cluster.
__device__ __forceinline__ void mbar_arrive_peer(uint64_t *bar, uint32_t rank)
{
  asm volatile("{\n"
               "  .reg .b32 remote;\n"
               "  mapa.shared::cluster.u32 remote, %0, %1;\n"
               "  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n"
               "}" :: "r"(smem_addr(bar)), "r"(rank) : "memory");
}

// tma_load_2d into the same place of every CTA in `mask` (bit i: rank i),
// completing on each one's barrier at `bar`'s place.
__device__ __forceinline__ void tma_load_2d_multicast(void *dst, const void *map, int x, int y, uint64_t *bar,
                                                      uint16_t mask)
{
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(smem_addr(dst)), "l"(map), "r"(x), "r"(y), "r"(smem_addr(bar)), "h"(mask)
               : "memory");
}
]]

-- Register budget moves between warpgroups (setmaxnreg), as two helpers
-- with the counts baked in: the producer gives, the consumers take.
function M.setmaxnreg(producer, consumer)
  return string.format([[
__device__ __forceinline__ void producer_regs()
{
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %d;");
}

__device__ __forceinline__ void consumer_regs()
{
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %d;");
}
]], producer, consumer)
end

-- wgmma m64nNk16 with f32 accumulators, A and B from shared-memory
-- descriptors (both K-major), for element type ab ("bf16" or "f16"): the
-- accumulator operand list, N / 2 registers, is written out here.
local function wgmma_text(n, ab)
  local regs, ops = {}, {}
  local nacc = n // 2
  for i = 0, nacc - 1 do
    regs[#regs + 1] = "%" .. i
    ops[#ops + 1] = string.format('"+f"(d[%d])', i)
  end
  local lines = {}
  for i = 1, #ops, 8 do
    lines[#lines + 1] = "                 " .. table.concat(ops, ", ", i, math.min(i + 7, #ops))
  end
  return string.format([[
// D (64 x %d, f32) += A (64 x 16) * B (%d x 16)^T; scale_d == 0 overwrites D.
__device__ __forceinline__ void wgmma_m64n%dk16(float (&d)[%d], uint64_t da, uint64_t db, int scale_d)
{
  asm volatile("{\n"
               ".reg .pred p;\n"
               "setp.ne.b32 p, %%%d, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s "
               "{%s}, %%%d, %%%d, p, 1, 1, 0, 0;\n"
               "}\n"
               : %s
               : "l"(da), "l"(db), "r"(scale_d));
}
]], n, n, n, nacc, nacc + 2, n, ab, ab, table.concat(regs, ", "), nacc, nacc + 1,
      table.concat(lines, ",\n"):gsub("^%s+", ""))
end

-- wgmma_text's #include line: one out/include file per N and type.
function M.wgmma(n, ab)
  return include(string.format("ptx_wgmma_m64n%dk16_%s.cuh", n, ab), wgmma_text(n, ab))
end

-- The helpers named in `parts` (keys of this module: "SMEM", "MBARRIER",
-- "ARRIVE", "BULK", "PREFETCH", "TMA", "WGMMA", "NAMED", "CLUSTER", "MULTICAST", "ASYNC"), in the order given:
-- one #include line each, of out/include/ptx_<group>.cuh, written once for every variant.
function M.helpers(parts)
  local out = {}
  for _, k in ipairs(parts) do
    local text = assert(M[k], "lib/ptx.lua: no helper group " .. tostring(k))
    out[#out + 1] = include("ptx_" .. k:lower() .. ".cuh", text)
  end
  return table.concat(out, "\n")
end

return M
