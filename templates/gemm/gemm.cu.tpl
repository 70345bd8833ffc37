@ local kind = require("lib.gemm_" .. P.kind)
${kind.source(P, VARIANT)}
