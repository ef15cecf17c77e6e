"""Which algorithms cuBLASLt's heuristic offers for the fused loss's chunk products (GPT-2's head, 2048-row chunks) when
the plan allows 16-byte aligned pointers (kernels/matmul.py's ALIGNMENT) against its default assumption of 256 bytes.
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
for name, (a, b, out, beta) in problems.items():
    offered = {}
    for alignment in (16, 256):
        MM.ALIGNMENT = alignment
        plan = MM._LtPlan(MM._cublaslt(), a, b, out, beta)
        offered[alignment] = [tuple(h.algo) for h in plan.algos]
    same = offered[16] == offered[256]
    print(f"{name:>7}: {len(offered[16])} algorithms at 16 bytes, {len(offered[256])} at 256; "
          f"{'the same, in the same order' if same else 'DIFFERENT'}"
          + ('' if same else f"; only at 256: {len(set(offered[256]) - set(offered[16]))}"))
