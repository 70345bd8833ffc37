"""Session 29: torch.compile's rmsnorm or layernorm (bf16, M*N = 2^28) at the N given, compiled and
warmed up outside the profiler, then one call inside cudaProfilerStart/Stop, for
`ncu --profile-from-start off`: its kernels' figures beside kite's.
Usage: s29_ncu_compile.py OP N..."""
import sys
import torch
import torch.nn.functional as F

EPS = 1e-6
op = sys.argv[1]
for n in [int(a) for a in sys.argv[2:]]:
    torch._dynamo.reset()
    m = (1 << 28) // n
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    if op == "rmsnorm":
        f = torch.compile(lambda x, w, b: F.rms_norm(x, (n,), w, EPS), dynamic=False)
    else:
        f = torch.compile(lambda x, w, b: F.layer_norm(x, (n,), w, b, EPS), dynamic=False)
    for _ in range(3):
        f(x, w, b)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    f(x, w, b)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"{op} N={n}: profiled one call", flush=True)
