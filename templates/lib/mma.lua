-- lib/mma.lua: warp-level tensor-core PTX (ldmatrix, mma.sync m16n8k16),
-- wrapped once in small device helpers.  The text needs smem_addr
-- (lib/ptx.lua, SMEM) before it.
local M = {}

-- The PTX type of an A/B element type.
local PTX_TYPE = { bf16 = "bf16", f16 = "f16" }

-- ldmatrix_x4 and mma_16816 for A/B elements of type ab ("bf16" or "f16"):
-- the #include line of out/include/mma_<ab>.cuh.
function M.helpers(ab)
  local t = assert(PTX_TYPE[ab], "lib/mma.lua: no mma for " .. tostring(ab))
  return include("mma_" .. ab .. ".cuh", (string.gsub([[
// Four 8x8 matrices of 16-bit elements from shared memory: lanes 8i..8i+7
// give the addresses of the 8 rows of matrix i (16 bytes each, 16-byte
// aligned); every lane gets in r[i] the elements (lane / 4, 2 * (lane % 4)
// and the next) of matrix i, the lower column in the lower half.  The memory
// clobber keeps it after the barrier that publishes the tile.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *row)
{
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(row)) : "memory");
}

// d += a * b for one 16x8x16 tile of the warp: a (16x16, row-major) and b
// (16x8, column-major) in the PTX ISA's m16n8k16 fragments, d in f32.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
  asm("mma.sync.aligned.m16n8k16.row.col.f32.@T.@T.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
]], "@T", t)))
end

return M
