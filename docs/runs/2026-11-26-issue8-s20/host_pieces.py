"""
The host time of one call of our Triton ops, piece by piece, against PyTorch's (issue 8, twentieth session). Call 1
(host_ablation.py) had the chosen set's eager step at ~28 ms of host time at 1 x 128 tokens against ~20 for the same
model with PyTorch's ops: forward +3 ms, backward +6. Here, at GPT-2's width and 1 x 128 tokens (the GPU always
waits for the host), us per call over 2000 calls, median of 5 rounds:
- forward pieces of the fused LayerNorm: torch.empty, the launch alone (LeanLaunch), its key alone, the launcher
  (norm_fwd without its torch.compile wrapper), with it, NormFunction.apply, kernels.layer_norm; PyTorch's
  reference with the residual, and F.layer_norm alone; an autograd Function that only allocates;
- backward per call: a chain of 24 norms (and 12 attention calls), forward + backward minus forward, per call;
- attention: flash_attention_qkv against the SDPA path, forward and backward.
Run: python docs/runs/2026-11-26-issue8-s20/host_pieces.py
"""
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import kernels  # noqa: E402
import kernels.norm as kn  # noqa: E402
import kernels.backend as kb  # noqa: E402
from kernels.backend import set_wrap_triton_enabled  # noqa: E402

dev = 'cuda'
B, T, C, NH = 1, 128, 768, 12
bf16 = torch.bfloat16
x = torch.randn(B, T, C, device=dev, dtype=bf16)
u = torch.randn(B, T, C, device=dev, dtype=bf16)
w = torch.ones(C, device=dev)
xg, ug, wg = (t.clone().requires_grad_() for t in (x, u, w))
qkv = torch.randn(B, T, 3 * NH, C // NH, device=dev, dtype=bf16, requires_grad=True)


def per_call(fn, n=2000, rounds=5):
    out = []
    for _ in range(rounds):
        fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        out.append((t1 - t0) / n * 1e6)
    return statistics.median(out)


class Alloc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return torch.empty_like(a)

    @staticmethod
    def backward(ctx, g):
        return g


# the launch alone: the arguments norm_fwd passes, made once
y = torch.empty_like(x)
h = torch.empty_like(x)
stats = torch.empty(2, B * T, device=dev)
programs, rows, meta = kn._launch(B * T, C, 2, x.device, 'fwd')
args = (x, u, w, w, y, h, stats, B * T, C, C, C, 1e-5, rows)
flags = dict(IS_RMS=False, HAS_RESIDUAL=True, HAS_BIAS=False, **meta)
with set_wrap_triton_enabled(False):  # as the launchers run in eager mode (kernels/backend.py's for_compile)
    kb.launch(kn._norm_fwd_kernel)[(programs,)](*args, **flags)
lean = kb._lean[id(kn._norm_fwd_kernel)]
launcher = kn.norm_fwd.__wrapped__

rows_out = []


def row(name, fn, **kw):
    v = per_call(fn, **kw)
    rows_out.append((name, v))
    print(f"{name:60s} {v:8.2f} us", flush=True)


torch.autocast(dev, dtype=bf16).__enter__()  # everything below as in the model's step: under autocast
print(f"forward pieces, us per call at {B} x {T} x {C} (bf16)")
row("torch.empty (B, T, C) bf16", lambda: torch.empty(x.shape, dtype=bf16, device=dev))
row("torch.cuda.current_device()", torch.cuda.current_device)
row("LeanLaunch key alone (18 arguments)",
    lambda: (tuple(flags.items()), *map(kb._specialised, args, lean.by_value)))
with set_wrap_triton_enabled(False):
    row("launch alone (LeanLaunch, norm forward)", lambda: kb.launch(kn._norm_fwd_kernel)[(programs,)](*args, **flags))
    row("norm_fwd launcher (checks, 3 empties, launch)", lambda: launcher(u, x, w, None, 1e-5, False, bf16))
row("norm_fwd with its compile wrapper", lambda: kn.norm_fwd(u, x, w, None, 1e-5, False, bf16))
row("autograd Function that only allocates", lambda: Alloc.apply(xg))
row("NormFunction.apply (grad)", lambda: kn.NormFunction.apply(ug, xg, wg, None, 1e-5, False, bf16))
row("kernels.layer_norm triton (grad)", lambda: kernels.layer_norm(ug, wg, None, 1e-5, residual=xg, out_dtype=bf16,
                                                                   backend='triton'))
row("kernels.layer_norm torch reference (grad)", lambda: kernels.layer_norm(ug, wg, None, 1e-5, residual=xg,
                                                                            out_dtype=bf16, backend='torch'))
row("F.layer_norm alone, bf16 in (grad)", lambda: F.layer_norm(ug, (C,), wg, None, 1e-5))
row("attention triton forward (grad)", lambda: kernels.flash_attention_qkv(qkv, NH, backend='triton'))
row("attention SDPA path forward (grad)", lambda: kernels.flash_attention_qkv(qkv, NH, backend='torch'))


def norm_chain(backend, backward):
    def run():
        hh, uu = xg, ug
        for _ in range(24):
            yy, hh = kernels.layer_norm(uu, wg, None, 1e-5, residual=hh, out_dtype=bf16, backend=backend)
            uu = yy
        if backward:
            torch.autograd.backward((yy, hh), (yy, hh))  # the outputs as their own gradients: no extra ops
    return run


def attention_chain(backend, backward):
    def run():
        outs = [kernels.flash_attention_qkv(qkv, NH, backend=backend) for _ in range(12)]
        if backward:
            torch.autograd.backward(outs, outs)
    return run


print("\nbackward per call (a chain's forward + backward minus its forward, over its calls)")
for label, chain, calls in (("norm", norm_chain, 24), ("attention", attention_chain, 12)):
    for backend in ('triton', 'torch'):
        fwd = per_call(chain(backend, False), n=100)
        both = per_call(chain(backend, True), n=100)
        print(f"{label} {backend:7s} forward {fwd / calls:8.2f} us/call, backward {(both - fwd) / calls:8.2f} us/call",
              flush=True)
