"""The fused loss's dx = g W per chunk (g: (C, V) bf16 gradient of the logits, W: (V, H) bf16), as one cuBLAS product
or split over the vocabulary into s batched products with fp32 outputs summed into bf16 (a split-K of our own, where
cuBLAS runs without a workspace and so without its own split-K). GPT-2's head: V = 50304, H = 768. Prints, per chunk
size C and split s, the median of 5 rounds (each a CUDA graph of 10 calls, rounds interleaved), us per call, the
TFLOP/s, and the largest difference to the unsplit product in units of bf16's rounding. Run once per cuBLAS
workspace setting (CUBLAS_WORKSPACE_CONFIG is read by the process)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from kernels.choose import graph_ms  # noqa: E402

V, H = 50304, 768
torch.manual_seed(0)
W = torch.randn(V, H, device='cuda', dtype=torch.bfloat16) * 0.02
print('CUBLAS_WORKSPACE_CONFIG =', os.environ.get('CUBLAS_WORKSPACE_CONFIG'))


def product(g, s, out):
    if s == 1:
        return torch.mm(g, W, out=out)
    parts = torch.bmm(g.view(g.shape[0], s, V // s).transpose(0, 1), W.view(s, V // s, H), out_dtype=torch.float32)
    return torch.sum(parts, 0, out=out)


for C in (2048, 4096):
    g = torch.randn(C, V, device='cuda', dtype=torch.bfloat16) * 1e-3
    ref = torch.mm(g.float(), W.float())
    out = torch.empty(C, H, device='cuda', dtype=torch.bfloat16)
    splits = (1, 2, 3, 4, 6, 8)
    rounds = {s: [] for s in splits}
    for _ in range(5):
        for s in splits:
            rounds[s].append(graph_ms(lambda: product(g, s, out)) * 1e3)
    for s in splits:
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        product(g, s, out)
        extra = (torch.cuda.max_memory_allocated() - base) / 2**20
        err = ((out.float() - ref).abs() / ref.abs().clamp(min=1e-30)).max().item() / 2**-8
        us = sorted(rounds[s])[2]
        print(f"C={C} s={s}: {us:7.1f} us ({2 * C * V * H / us / 1e6:5.0f} TFLOP/s) of {', '.join(f'{t:.1f}' for t in rounds[s])}"
              f"; extra {extra:.1f} MiB; max rel err {err:.2f} bf16 ulps")
