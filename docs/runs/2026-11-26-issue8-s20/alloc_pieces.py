"""
Host us per call of the small pieces every launcher repeats, on the GPU machine's host (issue 8, twentieth session):
ways to make an output tensor, the eager wrapper's context manager, and the lean launch's key built by a function per
argument or inline. Median of 5 rounds of 20,000 calls each.
Run: python docs/runs/2026-11-26-issue8-s20/alloc_pieces.py
"""
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import torch  # noqa: E402

import kernels.backend as kb  # noqa: E402

x = torch.randn(1, 128, 768, device='cuda', dtype=torch.bfloat16)
bf16, fp32 = torch.bfloat16, torch.float32


def per_call(fn, n=20000, rounds=5):
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n * 1e6)
    torch.cuda.synchronize()
    return statistics.median(out)


args = (x, x, x, x, x, x, x, 128, 768, 768, 768, 1e-5, 4)
by_value = [False] * len(args)
T = torch.Tensor


def inline_key():
    return tuple((a.dtype, a.data_ptr() % 16 == 0) if isinstance(a, T) else
                 (a == 1, a % 16 == 0, -2**31 <= a < 2**31, a < 2**63) if type(a) is int else
                 float if type(a) is float else a for a in args)


def wrapper_context():
    with kb.set_wrap_triton_enabled(False):
        pass


for label, fn in [
        ("torch.empty(shape, dtype=, device=)", lambda: torch.empty(x.shape, dtype=bf16, device=x.device)),
        ("torch.empty((2, 128), dtype=fp32, device=)", lambda: torch.empty((2, 128), dtype=fp32, device=x.device)),
        ("x.new_empty(shape)", lambda: x.new_empty(x.shape)),
        ("x.new_empty((2, 128), dtype=fp32)", lambda: x.new_empty((2, 128), dtype=fp32)),
        ("torch.empty_like(x)", lambda: torch.empty_like(x)),
        ("torch.empty_like(x, dtype=fp32)", lambda: torch.empty_like(x, dtype=fp32)),
        ("torch.empty_like(x, memory_format=contiguous)", lambda: torch.empty_like(x, memory_format=torch.contiguous_format)),
        ("with set_wrap_triton_enabled(False): pass", wrapper_context),
        ("key: map(_specialised) over 13 arguments", lambda: tuple(map(kb._specialised, args, by_value))),
        ("key: inline over 13 arguments", inline_key),
]:
    print(f"{label:50s} {per_call(fn):7.2f} us", flush=True)
