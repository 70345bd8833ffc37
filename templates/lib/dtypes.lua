-- lib/dtypes.lua: the element types kite knows, as CUDA sees them.
local M = {
  bf16 = { ctype = "__nv_bfloat16", size = 2, kite = "KITE_BF16",
           to_f32 = "__bfloat162float(v)", from_f32 = "__float2bfloat16_rn(v)" },
  f16  = { ctype = "__half", size = 2, kite = "KITE_F16",
           to_f32 = "__half2float(v)", from_f32 = "__float2half_rn(v)" },
  f32  = { ctype = "float", size = 4, kite = "KITE_F32",
           to_f32 = "v", from_f32 = "v" },
}

function M.includes()
  return "#include <cuda_runtime.h>\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n" ..
         "#include <stdint.h>\n#include <math.h>"
end

-- to_f32 / from_f32 for elem_t, which the caller has typedef'd.
function M.convert_for(d)
  return string.format([[
__device__ __forceinline__ float to_f32(elem_t v) { return %s; }
__device__ __forceinline__ elem_t from_f32(float v) { return %s; }
]], d.to_f32, d.from_f32)
end

for _, d in pairs({ M.bf16, M.f16, M.f32 }) do
  d.convert = function() return M.convert_for(d) end
end

return M
