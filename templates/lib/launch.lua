-- lib/launch.lua: host-side helpers the generated launchers share.
local M = {}

-- Kernel attributes set once per device, not per launch (cudaFuncSetAttribute
-- costs about a microsecond): the dynamic shared-memory limit, and clusters
-- past the portable 8 CTAs.  Needs <atomic>.
M.RAISE_SMEM = [[
// Sets attr of kernel to value unless `done` has the device's bit (the first 64 devices).
template <typename Kernel>
__host__ cudaError_t set_attr_once(std::atomic<uint64_t> &done, Kernel kernel, cudaFuncAttribute attr, int value)
{
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const uint64_t bit = dev < 64 ? 1ull << dev : 0;
  if (bit && (done.load(std::memory_order_relaxed) & bit)) return cudaSuccess;
  e = cudaFuncSetAttribute(kernel, attr, value);
  if (e == cudaSuccess && bit) done.fetch_or(bit, std::memory_order_relaxed);
  return e;
}

std::atomic<uint64_t> smem_raised{0}, big_clusters{0};

template <typename Kernel>
__host__ cudaError_t raise_smem(Kernel kernel, int bytes)
{
  return set_attr_once(smem_raised, kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

template <typename Kernel>
__host__ cudaError_t allow_big_clusters(Kernel kernel)
{
  return set_attr_once(big_clusters, kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
}
]]

-- RAISE_SMEM's #include line (out/include/launch_raise_smem.cuh, one copy for every variant).
function M.raise_smem() return include("launch_raise_smem.cuh", M.RAISE_SMEM) end

return M
