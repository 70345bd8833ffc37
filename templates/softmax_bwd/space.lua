-- The softmax backward parameter space: the row-op axes of lib/rowops.lua,
-- limited by its options for an op that reads two rows.
return require("lib.rowops").space("softmax_bwd")
