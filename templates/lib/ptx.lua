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

-- The helpers named in `parts` ("SMEM", "MBARRIER", "BULK"), in that order.
function M.helpers(parts)
  local out = {}
  for _, k in ipairs(parts) do
    out[#out + 1] = assert(M[k], "lib/ptx.lua: no helper group " .. tostring(k))
  end
  return table.concat(out, "\n")
end

return M
