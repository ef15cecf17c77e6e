"""
What a Python autograd node costs the host in an eager backward, on CUDA tensors (the engine runs
the backward on its device thread, which takes the GIL for each Python node) against CPU tensors (the
calling thread runs it). Host us per forward + backward of one tiny op: a C++ op (x * 1), an identity
autograd.Function, and a chain of 10 of each (so the engine's fixed cost per backward call divides
out). Lowest of 3 rounds of 2000 calls.
Run: python docs/runs/2026-11-25-issue8-s7/py_nodes.py
"""
import time

import torch


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g


def us(fn, calls=2000):
    best = float('inf')
    for _ in range(3):
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return best


def chain(op, n):
    def f(x):
        for _ in range(n):
            x = op(x)
        return x
    return f


for device in ('cuda', 'cpu'):
    x = torch.randn(64, device=device, requires_grad=True)
    g = torch.ones(64, device=device)
    row = {}
    for name, op in (('C++ op (x * 1)', lambda t: t * 1), ('Python Function', Identity.apply)):
        for n in (1, 10):
            f = chain(op, n)
            row[f"{name}, chain of {n}"] = us(lambda: torch.autograd.grad(f(x), x, g))
            row[f"{name}, chain of {n}, forward only"] = us(lambda: f(x))
    print(f"{device}: host us per forward + backward (torch.autograd.grad)")
    for k, v in row.items():
        print(f"  {k:45s} {v:8.1f}")
    per_node = lambda name: ((row[f"{name}, chain of 10"] - row[f"{name}, chain of 10, forward only"])
                             - (row[f"{name}, chain of 1"] - row[f"{name}, chain of 1, forward only"])) / 9
    print(f"  backward per node: C++ {per_node('C++ op (x * 1)'):.1f} us, Python {per_node('Python Function'):.1f} us")
