-- The parameter space of rmsnorm over a residual stream: the row-op axes of
-- lib/rowops.lua, limited by its options for an op that reads two rows.
return require("lib.rowops").space("rmsnorm_res")
