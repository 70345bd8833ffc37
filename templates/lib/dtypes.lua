-- lib/dtypes.lua: the element types kite knows, as CUDA sees them.
local M = {
  bf16 = { ctype = "__nv_bfloat16", size = 2, kite = "KITE_BF16",
           to_f32 = "__bfloat162float(v)", from_f32 = "__float2bfloat16_rn(v)",
           -- a bf16 is the high half of its float: a shift or a mask, no conversion
           unpack = "f[0] = __uint_as_float(w << 16); f[1] = __uint_as_float(w & 0xffff0000u);",
           pack = "const __nv_bfloat162 h = __floats2bfloat162_rn(f[0], f[1]); uint32_t w; memcpy(&w, &h, 4); return w;" },
  f16  = { ctype = "__half", size = 2, kite = "KITE_F16",
           to_f32 = "__half2float(v)", from_f32 = "__float2half_rn(v)",
           unpack = "__half2 h; memcpy(&h, &w, 4); const float2 v = __half22float2(h); f[0] = v.x; f[1] = v.y;",
           pack = "const __half2 h = __floats2half2_rn(f[0], f[1]); uint32_t w; memcpy(&w, &h, 4); return w;" },
  f32  = { ctype = "float", size = 4, kite = "KITE_F32",
           to_f32 = "v", from_f32 = "v",
           unpack = "f[0] = __uint_as_float(w);", pack = "return __float_as_uint(f[0]);" },
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

-- Elements of elem_t handled as the 32-bit words that hold them: word_floats
-- and floats_word convert the elements of one word at once (16-bit types: a
-- pair by one packed conversion), so data held in registers stays in whole
-- words instead of being split into one register per element.
function M.words_for(d)
  return string.format([[
__device__ __forceinline__ void word_floats(uint32_t w, float *f) { %s }
__device__ __forceinline__ uint32_t floats_word(const float *f) { %s }
]], d.unpack, d.pack)
end

for _, d in pairs({ M.bf16, M.f16, M.f32 }) do
  d.convert = function() return M.convert_for(d) end
  d.words = function() return M.words_for(d) end
end

return M
