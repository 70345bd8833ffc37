"""Session 25: what torch.compile (inductor) runs for rmsnorm and layernorm, bf16, at N = 1024 and
16384, where it beats kite (session 23, H200: 4.18 / 4.10 TB/s): each generated Triton kernel's
decorator (persistent or looped reduction) and the config its autotuner picked.  Prints, times nothing."""
import torch
import torch.nn.functional as F

EPS = 1e-6
fns = {"rmsnorm": lambda x, w: F.rms_norm(x, (x.shape[-1],), w, EPS),
       "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPS)}
for op, fn in fns.items():
    for n in (1024, 16384):
        torch._dynamo.reset()
        m = (1 << 28) // n
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        args = (x, w) if op == "rmsnorm" else (x, w, torch.randn(n, device="cuda", dtype=torch.bfloat16))
        f = torch.compile(fn, dynamic=False)
        f(*args); torch.cuda.synchronize()
        from torch._inductor.codecache import PyCodeCache
        mods = getattr(PyCodeCache, "modules", None) or list(getattr(PyCodeCache, "cache", {}).values())
        for mod in list(mods)[-3:]:
            for name in dir(mod):
                k = getattr(mod, name)
                if not hasattr(k, "launchers"):
                    continue
                cfgs = [str(getattr(l, "config", None)) + f" regs={getattr(l, 'n_regs', '?')}" for l in (k.launchers or [])]
                src = getattr(getattr(k, "fn", None), "src", "") or ""
                kind = "persistent" if "persistent_reduction" in str(getattr(k, "heuristic_type", "")) else ""
                print(f"{op} N={n}: {name} {kind} heuristic={getattr(k, 'heuristic_type', '?')} "
                      f"configs={len(getattr(k, 'configs', None) or [])} chosen={cfgs}")
                for line in src.splitlines():
                    if any(s in line for s in ("tl.load", "tl.store", "for r", "rnumel", "RBLOCK", "R0_BLOCK", "xnumel =")):
                        print("   ", line.strip())
