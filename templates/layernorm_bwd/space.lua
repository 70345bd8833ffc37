-- The layernorm backward parameter space: the row-op axes of lib/rowops.lua,
-- limited by its options for an op that reads two rows and sums over rows.
return require("lib.rowops").space("layernorm_bwd")
