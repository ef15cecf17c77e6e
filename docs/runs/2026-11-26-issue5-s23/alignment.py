"""Which algorithms cuBLASLt's heuristic offers for the fused loss's chunk products (GPT-2's head, 2048-row chunks)
under kernels/matmul.py's preferences, against (1) its default assumption of 256-byte aligned pointers instead of the
plan's 16, and (2) every split-K reduction allowed (mask 7, the default) instead of the plan's fp32 one only (2).
$ python docs/runs/2026-11-26-issue5-s23/alignment.py"""
import os
import sys
sys.path.insert(0, os.getcwd())
import importlib
import torch
MM = importlib.import_module('kernels.matmul')

R, H, V = 2048, 768, 50304
x = torch.randn(R, H, device='cuda').to(torch.bfloat16)
w = torch.randn(V, H, device='cuda').to(torch.bfloat16)
g = torch.empty(R, V, device='cuda', dtype=torch.bfloat16)
dx = torch.empty(R, H, device='cuda', dtype=torch.bfloat16)
dw = torch.empty(V, H, device='cuda', dtype=torch.float32)
problems = {'logits': (x, w.T, g, 0.0), 'dx': (g, w, dx, 0.0), 'dW': (g.T, x, dw, 0.0), 'dW +=': (g.T, x, dw, 1.0)}
settings = {'the plan': (16, 2), '256-byte': (256, 2), 'any reduction': (16, 7)}
for name, (a, b, out, beta) in problems.items():
    offered = {}
    for setting, (alignment, reduction) in settings.items():
        MM.ALIGNMENT, MM._REDUCTION_FP32 = alignment, reduction
        offered[setting] = [tuple(h.algo) for h in MM._LtPlan(MM._cublaslt(), a, b, out, beta).algos]
    print(f"{name:>7}: " + "; ".join(
        f"{s}: {len(o)}" + ('' if s == 'the plan' else ' (the same, same order)' if o == offered['the plan']
                             else f" (differs: {len(set(o) - set(offered['the plan']))} not in the plan's)")
        for s, o in offered.items()))
