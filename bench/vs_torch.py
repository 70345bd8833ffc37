#!/usr/bin/env python3
"""kite's row ops against torch eager and torch.compile, on the GPU.

Loads ../build/libkite.so (relative to this file) with ctypes and calls the
public C entry points (kite_rmsnorm_fwd, kite_softmax_fwd,
kite_cross_entropy_fwd) on torch tensors, on torch's current stream.

For each op and row length N (M = elems / N rows):
  1. kite's output is checked against an f32 torch reference (allclose);
     a mismatch is printed and makes the exit status 1, timing goes on;
  2. kite, torch.compile (default mode, dynamic=False, compiled once per shape
     before timing) and torch eager are timed with
     triton.testing.do_bench(warmup=25, rep=200, return_mode="median") when
     triton imports, else with CUDA events (median, L2 flushed before each run);
  3. TB/s use the bytes kite-bench counts, the same for all three:
       rmsnorm        2*M*N*e + N*e  (read x, write y, read w once)
       softmax        2*M*N*e        (read x, write y)
       cross_entropy  M*N*e + M*12   (read x, int64 targets, f32 loss)

The torch code timed (the same function for eager and compile):
  rmsnorm        F.rms_norm(x, (N,), w, eps) when torch has it, else
                 (x.float() * rsqrt(mean(x.float()^2, -1) + eps) * w.float()).to(x.dtype)
  softmax        F.softmax(x, dim=-1)
  cross_entropy  F.cross_entropy(x, target, reduction="none")

Usage: python3 bench/vs_torch.py [--csv FILE] [--n LIST] [--elems 2^k]
                                 [--op LIST] [--dtype bf16] [--no-compile]
"""
import argparse
import ctypes
import glob
import math
import os
import statistics
import sys
import time

OPS = ("rmsnorm", "softmax", "cross_entropy", "softmax_bwd", "cross_entropy_bwd", "rmsnorm_bwd", "layernorm",
       "layernorm_bwd")
DEFAULT_NS = (1024, 4096, 16384, 65536, 262144)
EPS = 1e-6
IGNORE_INDEX = -100
KITE_DTYPE = {"bf16": 0, "f16": 1, "f32": 2}
# allclose tolerances of kite against an f32 reference: (rtol, atol); softmax's
# atol is scaled by 1/N below (its values are about 1/N).
TOL = {"rmsnorm": (2e-2, 2e-2), "softmax": (2e-2, 1e-3), "cross_entropy": (1e-3, 1e-3),
       "softmax_bwd": (2e-2, 1e-3), "cross_entropy_bwd": (2e-2, 1e-3), "rmsnorm_bwd": (2e-2, 2e-2), "layernorm": (2e-2, 2e-2),
       "layernorm_bwd": (2e-2, 2e-2)}


def log(*a):
    print(*a, flush=True)


def parse_count(s):
    s = s.strip()
    if s.startswith("2^"):
        return 1 << int(s[2:])
    v = int(s)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be positive: %s" % s)
    return v


def parse_list(s):
    return [parse_count(t) for t in s.split(",") if t.strip()]


def parse_ops(s):
    out = []
    for t in s.split(","):
        t = t.strip()
        t = "cross_entropy" if t in ("ce", "cross-entropy") else t
        if t == "all":
            return list(OPS)
        if t not in OPS:
            raise argparse.ArgumentTypeError("unknown op %r (%s)" % (t, ", ".join(OPS)))
        if t not in out:
            out.append(t)
    return out


# ---- libkite through ctypes ---------------------------------------------------

class Kite:
    def __init__(self, path):
        self.lib = self._load(path)
        L = self.lib
        i64, vp, ci = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int
        L.kite_last_error.restype = ctypes.c_char_p
        L.kite_last_error.argtypes = []
        L.kite_status_str.restype = ctypes.c_char_p
        L.kite_status_str.argtypes = [ci]
        L.kite_rmsnorm_fwd.restype = ci
        L.kite_rmsnorm_fwd.argtypes = [ci, i64, i64, vp, i64, vp, ctypes.c_float, vp, i64, vp, vp]
        L.kite_softmax_fwd.restype = ci
        L.kite_softmax_fwd.argtypes = [ci, i64, i64, vp, i64, vp, i64, vp]
        L.kite_cross_entropy_fwd.restype = ci
        L.kite_cross_entropy_fwd.argtypes = [ci, i64, i64, vp, i64, vp, i64, vp, vp, vp]
        L.kite_softmax_bwd.restype = ci
        L.kite_softmax_bwd.argtypes = [ci, i64, i64, vp, i64, vp, i64, vp, i64, vp]
        L.kite_cross_entropy_bwd.restype = ci
        L.kite_cross_entropy_bwd.argtypes = [ci, i64, i64, vp, i64, vp, i64, vp, vp, vp, i64, vp]
        L.kite_rmsnorm_bwd.restype = ci
        L.kite_rmsnorm_bwd.argtypes = [ci, i64, i64, vp, i64, vp, ctypes.c_float, vp, vp, i64, vp, i64, vp, vp,
                                       ctypes.c_size_t, vp]
        L.kite_rmsnorm_bwd_workspace.restype = ci
        L.kite_rmsnorm_bwd_workspace.argtypes = [i64, i64, ctypes.POINTER(ctypes.c_size_t)]
        L.kite_layernorm_bwd.restype = ci
        L.kite_layernorm_bwd.argtypes = [ci, i64, i64, vp, i64, vp, vp, vp, vp, i64, vp, i64, vp, vp, vp,
                                         ctypes.c_size_t, vp]
        L.kite_layernorm_bwd_workspace.restype = ci
        L.kite_layernorm_bwd_workspace.argtypes = [i64, i64, ctypes.POINTER(ctypes.c_size_t)]
        L.kite_layernorm_fwd.restype = ci
        L.kite_layernorm_fwd.argtypes = [ci, i64, i64, vp, i64, vp, vp, ctypes.c_float, vp, i64, vp, vp, vp]
        L.kite_explain.restype = ci
        L.kite_explain.argtypes = [ctypes.c_char_p, ci, i64, i64, i64, ctypes.c_char_p, ctypes.c_size_t]

    @staticmethod
    def _load(path):
        if not os.path.exists(path):
            sys.exit("vs_torch: %s not found; build it first (make build/libkite.so)" % path)
        try:
            return ctypes.CDLL(path)
        except OSError as first:
            # libkite.so needs libcudart.so.<major> of the toolkit that built it; torch
            # may ship another.  Load the toolkit's cudart globally and try again.
            roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
            tried = []
            for root in [r for r in roots if r]:
                for so in sorted(glob.glob(os.path.join(root, "lib64", "libcudart.so*"))):
                    try:
                        ctypes.CDLL(so, mode=ctypes.RTLD_GLOBAL)
                        tried.append(so)
                    except OSError:
                        pass
            try:
                return ctypes.CDLL(path)
            except OSError as second:
                sys.exit("vs_torch: cannot load %s: %s\n  (first try: %s; preloaded: %s)\n"
                         "  set CUDA_HOME or LD_LIBRARY_PATH to the toolkit that built it"
                         % (path, second, first, ", ".join(tried) or "nothing"))

    def check(self, status, what):
        if status != 0:
            raise RuntimeError("%s: %s: %s" % (what, self.lib.kite_status_str(status).decode(),
                                               self.lib.kite_last_error().decode()))

    def explain(self, op, dtype, M, N):
        buf = ctypes.create_string_buffer(1024)
        s = self.lib.kite_explain(op.encode(), KITE_DTYPE[dtype], M, N, 0, buf, len(buf))
        if s != 0:
            return "? (%s)" % self.lib.kite_last_error().decode()
        text = buf.value.decode()
        # "<op> <dtype> M=.. N=..: <variant> (heuristic ...)"
        try:
            return text.split(": ", 1)[1].split(" ", 1)[0]
        except IndexError:
            return text


# ---- timing ------------------------------------------------------------------------

def make_timer(torch):
    try:
        import triton.testing as tt
        ver = getattr(sys.modules.get("triton"), "__version__", "?")

        def bench(fn):
            try:
                return float(tt.do_bench(fn, warmup=25, rep=200, return_mode="median"))
            except TypeError:   # an older triton without return_mode
                return float(tt.do_bench(fn, warmup=25, rep=200, quantiles=[0.5]))
        return bench, "triton.testing.do_bench(warmup=25, rep=200, median) [triton %s]" % ver
    except Exception:   # noqa: BLE001 - any import problem means: use events
        pass

    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")

    def bench(fn):
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        est = max(time.perf_counter() - t0, 1e-6)
        n_warm = max(1, min(1000, int(0.025 / est)))
        n_rep = max(10, min(2000, int(0.2 / est)))
        for _ in range(n_warm):
            fn()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
        for i in range(n_rep):
            flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))
    return bench, "CUDA events, median, 256 MiB L2 flush before each run (triton not importable)"


# ---- the ops ---------------------------------------------------------------------------

def torch_fns(torch, F):
    if hasattr(F, "rms_norm"):
        def rmsnorm(x, w):
            return F.rms_norm(x, (x.shape[-1],), w, EPS)
        rms_desc = "F.rms_norm"
    else:
        def rmsnorm(x, w):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()).to(x.dtype)
        rms_desc = "explicit f32 formula"

    def softmax(x):
        return F.softmax(x, dim=-1)

    def cross_entropy(x, t):
        return F.cross_entropy(x, t, reduction="none")

    def softmax_bwd(y, dy):   # what autograd runs for softmax's backward (f32 inside)
        if hasattr(torch, "_softmax_backward_data"):
            return torch._softmax_backward_data(dy, y, -1, y.dtype)
        yf = y.float()
        return (yf * (dy.float() - (yf * dy.float()).sum(-1, keepdim=True))).to(y.dtype)
    def cross_entropy_bwd(x, t, lse):   # dx from the forward's lse, dloss 1, no ignored rows
        p = (x.float() - lse[:, None]).exp()
        return (p - F.one_hot(t, x.shape[-1]).float()).to(x.dtype)
    def rmsnorm_bwd(x, w, dy, rstd):   # dx and dw (f32) from the forward's rstd
        xh = x.float() * rstd[:, None]
        g = dy.float() * w.float()
        dx = rstd[:, None] * (g - xh * (xh * g).mean(-1, keepdim=True))
        return dx.to(x.dtype), (dy.float() * xh).sum(0)
    def layernorm_bwd(x, w, dy, mean, rstd):   # dx, dw and db (f32) from the forward's mean and rstd
        xh = (x.float() - mean[:, None]) * rstd[:, None]
        g = dy.float() * w.float()
        dx = rstd[:, None] * (g - g.mean(-1, keepdim=True) - xh * (xh * g).mean(-1, keepdim=True))
        return dx.to(x.dtype), (dy.float() * xh).sum(0), dy.float().sum(0)
    return {"rmsnorm": rmsnorm, "softmax": softmax, "cross_entropy": cross_entropy,
            "softmax_bwd": softmax_bwd, "cross_entropy_bwd": cross_entropy_bwd,
            "rmsnorm_bwd": rmsnorm_bwd, "layernorm_bwd": layernorm_bwd,
            "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPS)}, rms_desc


def reference(torch, F, op, x, w, t):
    xf = x.float()
    if op == "rmsnorm":
        return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()
    if op == "softmax":
        return torch.softmax(xf, dim=-1)
    if op == "layernorm":   # w doubles as the bias
        return F.layer_norm(xf, (xf.shape[-1],), w.float(), w.float(), EPS)
    if op == "softmax_bwd":   # x: the forward's output y, w: dy
        wf = w.float()
        return xf * (wf - (xf * wf).sum(-1, keepdim=True))
    if op == "cross_entropy_bwd":
        return torch.softmax(xf, dim=-1) - F.one_hot(t, xf.shape[-1]).float()
    return F.cross_entropy(xf, t, reduction="none")


def bytes_moved(op, M, N, es):
    if op == "rmsnorm":
        return 2 * M * N * es + N * es
    if op == "softmax":
        return 2 * M * N * es
    if op == "softmax_bwd":
        return 3 * M * N * es
    if op == "cross_entropy_bwd":
        return 2 * M * N * es + M * 12
    if op == "layernorm":   # x read, y written; w and b
        return 2 * M * N * es + 2 * N * es
    if op == "rmsnorm_bwd":   # x, dy read, dx written; w, rstd read, dw (f32) written
        return 3 * M * N * es + N * (es + 4) + M * 4
    if op == "layernorm_bwd":   # x, dy read, dx written; w, mean, rstd read, dw, db (f32) written
        return 3 * M * N * es + N * (es + 8) + M * 8
    return M * N * es + M * 12


def compare(torch, op, got, ref, N):
    """None when got matches ref, else a one-line description of the worst element."""
    rtol, atol = TOL[op]
    if op in ("softmax", "softmax_bwd", "cross_entropy_bwd"):
        atol /= N
    g = got.float()
    if torch.allclose(g, ref, rtol=rtol, atol=atol):
        return None
    diff = (g - ref).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    bad = int((~torch.isclose(g, ref, rtol=rtol, atol=atol)).sum())
    idx = int(diff.argmax())
    coords = divmod(idx, ref.shape[-1]) if ref.dim() == 2 else (idx,)
    return ("%d of %d elements differ (rtol %g, atol %g); worst at %s: kite %r, torch f32 %r"
            % (bad, ref.numel(), rtol, atol, coords, g.flatten()[idx].item(), ref.flatten()[idx].item()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--csv", help="also write one CSV row per shape here")
    ap.add_argument("--n", type=parse_list, default=list(DEFAULT_NS), help="row lengths (2^k allowed)")
    ap.add_argument("--elems", type=parse_count, default=1 << 28, help="M*N per problem (default 2^28)")
    ap.add_argument("--op", type=parse_ops, default=list(OPS), help="ops, comma-separated")
    ap.add_argument("--dtype", choices=sorted(KITE_DTYPE), default="bf16")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--lib", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "build", "libkite.so"))
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        sys.exit("vs_torch: torch sees no CUDA device")
    torch.cuda.init()
    dev = torch.cuda.current_device()
    cap = torch.cuda.get_device_capability(dev)
    if cap != (9, 0):
        sys.exit("vs_torch: %s is sm_%d%d; kite is built for sm_90a" % (torch.cuda.get_device_name(dev), *cap))
    kite = Kite(os.path.normpath(args.lib))
    try:
        import torch._dynamo
        dyn = torch._dynamo.config
    except Exception:   # noqa: BLE001 - an old torch: no recompile limit to raise
        dyn = None
    for knob in ("cache_size_limit", "recompile_limit"):   # one recompile per shape
        if dyn is not None and hasattr(dyn, knob):
            setattr(dyn, knob, max(64, getattr(dyn, knob)))

    bench, method = make_timer(torch)
    fns, rms_desc = torch_fns(torch, F)
    compiled = {}
    if not args.no_compile:
        compiled = {op: torch.compile(fns[op], dynamic=False) for op in args.op}
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[args.dtype]
    kd = KITE_DTYPE[args.dtype]
    es = torch.empty((), dtype=dtype).element_size()

    log("# vs_torch: %s, torch %s, %s; libkite %s" % (torch.cuda.get_device_name(dev), torch.__version__,
                                                       args.dtype, os.path.normpath(args.lib)))
    log("# timing: %s; rmsnorm in torch: %s; M*N = %d" % (method, rms_desc, args.elems))
    log("# bytes: rmsnorm 2*M*N*e + N*e; softmax 2*M*N*e; cross_entropy M*N*e + M*12; softmax_bwd 3*M*N*e;"
        " cross_entropy_bwd 2*M*N*e + M*12; rmsnorm_bwd 3*M*N*e + N*(e+4) + M*4;"
        " layernorm 2*M*N*e + 2*N*e; layernorm_bwd 3*M*N*e + N*(e+8) + M*8;"
        " TB/s = 1e12 B/s")

    rows, failures = [], []
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    for op in args.op:
        for N in args.n:
            M = max(1, args.elems // N)
            stream = torch.cuda.current_stream().cuda_stream
            x = torch.randn(M, N, device="cuda", dtype=dtype, generator=gen)
            w = (torch.rand(N, device="cuda", generator=gen) + 0.5).to(dtype)
            t = torch.randint(0, N, (M,), device="cuda", dtype=torch.int64, generator=gen)
            y = torch.empty_like(x)
            loss = torch.empty(M, device="cuda", dtype=torch.float32)

            if op == "rmsnorm":
                def kite_fn():
                    kite.check(kite.lib.kite_rmsnorm_fwd(kd, M, N, x.data_ptr(), N, w.data_ptr(), EPS,
                                                         y.data_ptr(), N, None, stream), "kite_rmsnorm_fwd")
                    return y

                def torch_args():
                    return (x, w)
            elif op == "cross_entropy_bwd":
                lse = torch.logsumexp(x.float(), dim=-1)

                def kite_fn():
                    kite.check(kite.lib.kite_cross_entropy_bwd(kd, M, N, x.data_ptr(), N, t.data_ptr(),
                                                               IGNORE_INDEX, lse.data_ptr(), None,
                                                               y.data_ptr(), N, stream), "kite_cross_entropy_bwd")
                    return y

                def torch_args():
                    return (x, t, lse)
            elif op == "layernorm":   # w as the bias too
                def kite_fn():
                    kite.check(kite.lib.kite_layernorm_fwd(kd, M, N, x.data_ptr(), N, w.data_ptr(), w.data_ptr(),
                                                           EPS, y.data_ptr(), N, None, None, stream),
                               "kite_layernorm_fwd")
                    return y

                def torch_args():
                    return (x, w, w)
            elif op == "rmsnorm_bwd":
                dy = torch.randn(M, N, device="cuda", dtype=dtype, generator=gen)
                rstd = torch.rsqrt(x.float().pow(2).mean(-1) + EPS)
                dw = torch.empty(N, device="cuda", dtype=torch.float32)
                wsb = ctypes.c_size_t(0)
                kite.check(kite.lib.kite_rmsnorm_bwd_workspace(M, N, ctypes.byref(wsb)), "kite_rmsnorm_bwd_workspace")
                ws = torch.empty(max(wsb.value, 16), device="cuda", dtype=torch.uint8)

                def kite_fn():
                    kite.check(kite.lib.kite_rmsnorm_bwd(kd, M, N, x.data_ptr(), N, w.data_ptr(), 0.0,
                                                         rstd.data_ptr(), dy.data_ptr(), N, y.data_ptr(), N,
                                                         dw.data_ptr(), ws.data_ptr(), wsb.value, stream),
                               "kite_rmsnorm_bwd")
                    return y

                def torch_args():
                    return (x, w, dy, rstd)
            elif op == "layernorm_bwd":
                dy = torch.randn(M, N, device="cuda", dtype=dtype, generator=gen)
                mean = x.float().mean(-1)
                rstd = torch.rsqrt(x.float().var(-1, unbiased=False) + EPS)
                dw = torch.empty(N, device="cuda", dtype=torch.float32)
                db = torch.empty(N, device="cuda", dtype=torch.float32)
                wsb = ctypes.c_size_t(0)
                kite.check(kite.lib.kite_layernorm_bwd_workspace(M, N, ctypes.byref(wsb)),
                           "kite_layernorm_bwd_workspace")
                ws = torch.empty(max(wsb.value, 16), device="cuda", dtype=torch.uint8)

                def kite_fn():
                    kite.check(kite.lib.kite_layernorm_bwd(kd, M, N, x.data_ptr(), N, w.data_ptr(), mean.data_ptr(),
                                                           rstd.data_ptr(), dy.data_ptr(), N, y.data_ptr(), N,
                                                           dw.data_ptr(), db.data_ptr(), ws.data_ptr(), wsb.value,
                                                           stream), "kite_layernorm_bwd")
                    return y

                def torch_args():
                    return (x, w, dy, mean, rstd)
            elif op == "softmax_bwd":
                x = torch.softmax(x.float(), dim=-1).to(dtype)   # the forward's output y
                w = torch.randn(M, N, device="cuda", dtype=dtype, generator=gen)   # dy

                def kite_fn():
                    kite.check(kite.lib.kite_softmax_bwd(kd, M, N, x.data_ptr(), N, w.data_ptr(), N,
                                                         y.data_ptr(), N, stream), "kite_softmax_bwd")
                    return y

                def torch_args():
                    return (x, w)
            elif op == "softmax":
                def kite_fn():
                    kite.check(kite.lib.kite_softmax_fwd(kd, M, N, x.data_ptr(), N, y.data_ptr(), N, stream),
                               "kite_softmax_fwd")
                    return y

                def torch_args():
                    return (x,)
            else:
                def kite_fn():
                    kite.check(kite.lib.kite_cross_entropy_fwd(kd, M, N, x.data_ptr(), N, t.data_ptr(),
                                                               IGNORE_INDEX, loss.data_ptr(), None, stream),
                               "kite_cross_entropy_fwd")
                    return loss

                def torch_args():
                    return (x, t)

            nbytes = bytes_moved(op, M, N, es)
            tag = "%s N=%d M=%d" % (op, N, M)
            res = {"op": op, "dtype": args.dtype, "M": M, "N": N, "bytes": nbytes,
                   "variant": kite.explain(op, args.dtype, M, N), "check": "ok"}

            # correctness first
            out = None
            try:
                out = kite_fn()
                torch.cuda.synchronize()
                if op in ("rmsnorm_bwd", "layernorm_bwd"):
                    if op == "rmsnorm_bwd":
                        ref, ref_dw = fns[op](x.float(), w.float(), dy.float(), rstd)
                        sums = [("dw", dw, ref_dw)]
                    else:
                        ref, ref_dw, ref_db = fns[op](x.float(), w.float(), dy.float(), mean, rstd)
                        sums = [("dw", dw, ref_dw), ("db", db, ref_db)]
                    for name, got_s, ref_s in sums:
                        if not torch.allclose(got_s, ref_s, rtol=1e-3, atol=1e-4 * M ** 0.5):
                            worst = int((got_s - ref_s).abs().argmax())
                            failures.append("%s: %s[%d] %r, torch f32 %r" % (tag, name, worst, got_s[worst].item(),
                                                                            ref_s[worst].item()))
                            log("MISMATCH %s: %s" % (tag, name))
                            res["check"] = "MISMATCH"
                else:
                    ref = reference(torch, F, op, x, w, t)
                bad = compare(torch, op, out, ref, N)
                del ref
                if bad:
                    res["check"] = "MISMATCH"
                    failures.append(tag + ": " + bad)
                    log("MISMATCH %s: %s" % (tag, bad))
            except Exception as e:   # noqa: BLE001 - report, keep going with the other impls
                res["check"] = "ERROR"
                failures.append("%s: %s" % (tag, e))
                log("ERROR %s: kite: %s" % (tag, e))

            fn_torch = fns[op]
            impls = [("kite", kite_fn if res["check"] != "ERROR" else None)]
            if compiled:
                cfn = compiled[op]
                try:
                    t0 = time.perf_counter()
                    cfn(*torch_args())
                    torch.cuda.synchronize()
                    res["compile_s"] = time.perf_counter() - t0
                    impls.append(("compile", lambda: cfn(*torch_args())))
                except Exception as e:   # noqa: BLE001
                    failures.append("%s: torch.compile: %s" % (tag, e))
                    log("ERROR %s: torch.compile: %s" % (tag, str(e).splitlines()[0] if str(e) else e))
                    impls.append(("compile", None))
            else:
                impls.append(("compile", None))
            impls.append(("eager", lambda: fn_torch(*torch_args())))

            for name, fn in impls:
                ms = float("nan")
                if fn is not None:
                    try:
                        ms = bench(fn)
                    except Exception as e:   # noqa: BLE001
                        failures.append("%s: timing %s: %s" % (tag, name, e))
                        log("ERROR %s: timing %s: %s" % (tag, name, e))
                res[name + "_us"] = ms * 1e3
                res[name + "_tbps"] = nbytes / (ms * 1e-3) / 1e12 if ms > 0 else float("nan")
            res["kite_over_compile"] = res["kite_tbps"] / res["compile_tbps"]
            res["kite_over_eager"] = res["kite_tbps"] / res["eager_tbps"]
            log("%-13s N=%-7d M=%-7d kite %7.1f us %6.3f TB/s | compile %7.1f us %6.3f TB/s%s | "
                "eager %7.1f us %6.3f TB/s | %s | %s"
                % (op, N, M, res["kite_us"], res["kite_tbps"], res["compile_us"], res["compile_tbps"],
                   " (compiled in %.1f s)" % res["compile_s"] if "compile_s" in res else "",
                   res["eager_us"], res["eager_tbps"], res["check"], res["variant"]))
            rows.append(res)

            del x, w, t, y, loss, out, impls, kite_fn, torch_args
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    log("")
    log("%-13s %7s %10s %13s %11s %13s %11s %8s" % ("op", "N", "kite_TB/s", "compile_TB/s", "eager_TB/s",
                                                    "kite/compile", "kite/eager", "check"))
    for r in rows:
        log("%-13s %7d %10.3f %13.3f %11.3f %13.3f %11.3f %8s"
            % (r["op"], r["N"], r["kite_tbps"], r["compile_tbps"], r["eager_tbps"],
               r["kite_over_compile"], r["kite_over_eager"], r["check"]))
    ratios = [r["kite_over_compile"] for r in rows if math.isfinite(r["kite_over_compile"])]
    if ratios:
        log("geomean kite/compile: %.3f over %d shapes"
            % (math.exp(sum(math.log(v) for v in ratios) / len(ratios)), len(ratios)))

    if args.csv:
        cols = ["op", "dtype", "M", "N", "bytes", "kite_us", "compile_us", "eager_us", "kite_tbps",
                "compile_tbps", "eager_tbps", "kite_over_compile", "kite_over_eager", "check", "variant"]
        with open(args.csv, "w") as f:
            f.write(",".join(cols) + "\n")
            for r in rows:
                f.write(",".join(("%.6g" % r[c]) if isinstance(r[c], float) else str(r[c]) for c in cols) + "\n")
        log("wrote %s" % args.csv)

    if failures:
        log("FAILED: %d problem(s):" % len(failures))
        for f in failures:
            log("  " + f)
        return 1
    log("all kite outputs match torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
