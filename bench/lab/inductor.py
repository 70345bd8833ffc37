# Prints the Triton code torch.compile generates for the row ops (bf16), and
# runs each once so ncu can report its launch (grid, block, registers).
import torch, torch.nn.functional as F
from torch._inductor.utils import run_and_get_code
for N in (1024, 4096):
    M = (1 << 28) // N
    x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    t = torch.randint(0, N, (M,), device="cuda")
    fns = {"rmsnorm": (lambda x, w: F.rms_norm(x, (N,), w, 1e-6), (x, w)),
           "softmax": (lambda x: F.softmax(x, dim=-1), (x,)),
           "xent": (lambda x, t: F.cross_entropy(x, t, reduction="none"), (x, t))}
    for name, (fn, args) in fns.items():
        c = torch.compile(fn)
        _, codes = run_and_get_code(c, *args)
        print("=" * 20, name, N)
        for code in codes:
            keep = [l for l in code.splitlines() if any(k in l for k in ("def triton", "XBLOCK", "R0_BLOCK", "RBLOCK", "num_warps", "tl.load", "tl.store", "@triton", "grid", "reduction_hint", "persistent"))]
            print("\n".join(keep[:60]))
        torch.cuda.synchronize()
