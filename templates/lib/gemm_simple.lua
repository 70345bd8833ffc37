-- lib/gemm_simple.lua: the alignment-free gemm kind (placeholder: no points
-- yet; the fallback kernel is being written).
local M = {}
function M.valid(p) return false end
function M.name(p) return "gemm_simple" end
function M.meta(p) return { n_min = 1, n_max = 1, align = 2 } end
function M.source(p, variant) error("gemm_simple: no kernel yet") end
return M
