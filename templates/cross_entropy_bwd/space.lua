-- The cross-entropy backward parameter space: the row-op axes of
-- lib/rowops.lua, limited by its options (one pass, no reduction).
return require("lib.rowops").space("cross_entropy_bwd")
