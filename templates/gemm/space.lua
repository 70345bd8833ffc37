-- The gemm parameter space: two kinds of kernel under one op, so that
-- dispatch weighs them together.  "tma" (lib/gemm_tma.lua): TMA loads,
-- wgmma, a producer warpgroup and `wg` consumer warpgroups, for operands
-- whose pointers and row strides are 16-byte aligned.  "simple"
-- (lib/gemm_simple.lua): predicated loads and mma.sync, for any operands.
-- Each kind says which points it takes, names them and gives their
-- dispatch row; the axes a kind does not use are pinned by its valid().
local kinds = { tma = require "lib.gemm_tma", simple = require "lib.gemm_simple" }

return {
  op = "gemm", template = "gemm.cu.tpl",
  axes = {
    kind = { "tma", "simple" },
    ab = { "bf16", "f16" },           -- A and B
    c = { "bf16", "f16", "f32" },     -- C
    tile_m = { 64, 128, 256 },
    tile_n = { 64, 128, 192, 256 },
    stages = { 2, 3, 4, 5 },
    wg = { 1, 2 },                    -- consumer warpgroups
    cluster = { "1x1", "2x1", "1x2" },  -- CTAs along M x N sharing B (2x1) or A (1x2) by multicast
    sched = { "coop", "pingpong" },   -- consumers split each tile, or take turns with whole tiles
  },
  valid = function(p) return kinds[p.kind].valid(p) end,
  name = function(p) return kinds[p.kind].name(p) end,
  meta = function(p) return kinds[p.kind].meta(p) end,
}
