"""What torch.compile makes of a row op at a given N: each Triton kernel's kind
(persistent or looped reduction), its block sizes and warps, as the generated
code says and, where this torch exposes it, the config its autotuner launched.
Session 40: kite trails torch.compile on an H100 at rmsnorm 24576 (0.94x) and
softmax_bwd 12288 / 24576 (0.96x / 0.92x); this says how its kernels hold such a
row.  Usage (on the GPU machine): python3 bench/lab/inductor_probe.py [N ...]
"""
import re
import sys

import torch
import torch.nn.functional as F
from torch._inductor.utils import run_and_get_code

sys.path.insert(0, "bench")
from vs_torch import torch_fns  # noqa: E402  (the same functions vs_torch.py times)

M_TOTAL = 1 << 28


def args_for(op, M, N):
    x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    if op == "rmsnorm":
        return (x, w)
    if op == "layernorm":
        return (x, w, torch.randn_like(w))
    if op == "softmax_bwd":
        return (torch.softmax(x.float(), -1).bfloat16(), torch.randn_like(x))
    return (x,)


def kernel_lines(code):
    """The decorator and the launch-relevant lines of each Triton kernel in code."""
    out = []
    for m in re.finditer(r"@triton_heuristics\.(\w+)\((.*?)\)\n@triton\.jit\ndef (\w+)\(", code, re.S):
        kind, meta, name = m.group(1), m.group(2), m.group(3)
        size_hints = re.search(r"size_hints=(\{[^}]*\}|\[[^\]]*\])", meta)
        out.append(f"{name}: {kind}, size_hints {size_hints.group(1) if size_hints else '?'}")
    for m in re.finditer(r"(\w+)\.run\((.*?)\)\n", code):
        out.append(f"launch {m.group(1)}({m.group(2)[-120:]})")
    return out


SEEN = set()


def launched_configs():
    """Each kernel compiled since the last call: its launched config, where this torch exposes it."""
    try:
        from torch._inductor.codecache import PyCodeCache
        mods = list(getattr(PyCodeCache, "modules", None) or getattr(PyCodeCache, "cache", {}).values())
    except Exception as e:  # noqa: BLE001  (an internal API: report, don't fail)
        return [f"(no PyCodeCache: {e})"]
    out = []
    for mod in mods:
        for name in dir(mod):
            k = getattr(mod, name)
            if (id(mod), name) in SEEN:
                continue
            for ln in getattr(k, "launchers", None) or []:
                cfg = getattr(ln, "config", None)
                if cfg is not None:
                    SEEN.add((id(mod), name))
                    out.append(f"{name}: {cfg.kwargs}, num_warps {cfg.num_warps}, num_stages {cfg.num_stages}")
    return out


def main():
    ns = [int(a) for a in sys.argv[1:] if a.isdigit()] or [12288, 16384, 24576, 32768]
    ops = [a for a in sys.argv[1:] if not a.isdigit()] or ["rmsnorm", "softmax_bwd"]
    fns, _ = torch_fns(torch, F)
    for op in ops:
        for N in ns:
            torch._dynamo.reset()
            M = M_TOTAL // N
            fn = torch.compile(fns[op])
            _, codes = run_and_get_code(fn, *args_for(op, M, N))
            print(f"== {op} N={N} M={M}")
            for code in codes:
                for line in kernel_lines(code):
                    print("  " + line)
            for line in launched_configs():
                print("  launched " + line)


if __name__ == "__main__":
    main()
