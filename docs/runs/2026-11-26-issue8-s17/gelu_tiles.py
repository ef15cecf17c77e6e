"""GELU's backward at GPT-2's MLP (12288 x 3072 bf16) with and without writing the forward's output again
(gelu_bwd_with_y: recompute='activation'), for backward tiles (BLOCK_M, BLOCK_N, num_warps): median of 5 rounds
(a CUDA graph of 10 calls each, tiles interleaved), us per call and TB/s of the bytes that must move."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
import kernels  # noqa: E402,F401
from kernels.choose import graph_ms  # noqa: E402

G = sys.modules['kernels.gelu']  # the module: kernels.gelu as an attribute is the function

M, N = 12288, 3072
torch.manual_seed(0)
x = torch.randn(M, N, device='cuda', dtype=torch.bfloat16)
dy = torch.randn(M, N, device='cuda', dtype=torch.bfloat16)
tiles = [(4, 512, 2), (4, 512, 4), (4, 1024, 4), (8, 512, 4), (2, 1024, 4), (8, 1024, 8), (2, 512, 2), (1, 1024, 4),
         (4, 256, 2), (16, 256, 4), (1, 2048, 8), (8, 256, 2)]
default = G.TILE['bwd']
for with_y in (False, True):
    fn = (lambda: G.gelu_bwd_with_y(dy, x, None, 'none')) if with_y else (lambda: G.gelu_bwd(dy, x, None, 'none'))
    rounds = {t: [] for t in tiles}
    for _ in range(5):
        for t in tiles:
            G.TILE['bwd'] = t
            rounds[t].append(graph_ms(fn) * 1e3)
    G.TILE['bwd'] = default
    moved = M * N * 2 * (4 if with_y else 3)
    for t in tiles:
        us = sorted(rounds[t])[2]
        print(f"with_y={with_y} tile={t}: {us:6.1f} us ({moved / us / 1e6:.2f} TB/s) of {', '.join(f'{r:.1f}' for r in rounds[t])}")
