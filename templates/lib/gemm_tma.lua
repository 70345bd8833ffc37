-- lib/gemm_tma.lua: the TMA + wgmma gemm kind (placeholder: no points yet).
local M = {}
function M.valid(p) return false end
function M.name(p) return "gemm_tma" end
function M.meta(p) return { n_min = 1, n_max = 1, align = 16 } end
function M.source(p, variant) error("gemm_tma: no kernel yet") end
return M
