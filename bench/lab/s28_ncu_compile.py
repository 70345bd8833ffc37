"""Session 28: torch.compile's rmsnorm (bf16, M*N = 2^28) at N = 1024 and 16384, compiled and warmed
up outside the profiler, then one call inside cudaProfilerStart/Stop, for
`ncu --profile-from-start off`: its kernel's figures beside kite's (issue 2's 1-2% there)."""
import sys
import torch
import torch.nn.functional as F

EPS = 1e-6
for n in [int(a) for a in sys.argv[1:]] or [1024, 16384]:
    torch._dynamo.reset()
    m = (1 << 28) // n
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    f = torch.compile(lambda x, w: F.rms_norm(x, (n,), w, EPS), dynamic=False)
    for _ in range(3):
        f(x, w)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    f(x, w)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"rmsnorm N={n}: profiled one call", flush=True)
