-- lib/launch.lua: host-side helpers the generated launchers share.
local M = {}

-- Raising a kernel's dynamic shared-memory limit once per device, not per
-- launch (cudaFuncSetAttribute costs about a microsecond).  Needs <atomic>.
M.RAISE_SMEM = [[
// Devices (a bit each, the first 64) on which the limit has been raised.
std::atomic<uint64_t> smem_raised{0};

template <typename Kernel>
__host__ cudaError_t raise_smem(Kernel kernel, int bytes)
{
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const uint64_t bit = dev < 64 ? 1ull << dev : 0;
  if (bit && (smem_raised.load(std::memory_order_relaxed) & bit)) return cudaSuccess;
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e == cudaSuccess && bit) smem_raised.fetch_or(bit, std::memory_order_relaxed);
  return e;
}
]]

return M
