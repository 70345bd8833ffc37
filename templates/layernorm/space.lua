-- The layernorm forward parameter space: the row-op axes of lib/rowops.lua.
return require("lib.rowops").space("layernorm")
