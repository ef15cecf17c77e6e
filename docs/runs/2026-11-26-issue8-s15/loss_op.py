"""Issue 5's op alone at GPT-2's head (12288 x 768, V = 50304, bf16, forward + backward, the op's default chunk),
timed as bench times it (a CUDA graph of 10 calls), 5 times: the median, in ms. For comparing process settings."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
import kernels  # noqa: E402
from kernels.choose import graph_ms  # noqa: E402

torch.manual_seed(0)
x = (torch.randn(12288, 768, device='cuda', dtype=torch.bfloat16)).requires_grad_()
w = (torch.randn(50304, 768, device='cuda', dtype=torch.bfloat16) * 0.02).requires_grad_()
y = torch.randint(0, 50304, (12288,), device='cuda')


def step():
    x.grad = w.grad = None
    kernels.linear_cross_entropy(x, w, y, backend='triton').backward()


times = sorted(graph_ms(step, calls=10) for _ in range(5))
print(f"linear_cross_entropy 12288x768 V=50304 bf16 fwd+bwd: median {times[2]:.3f} ms (of {', '.join(f'{t:.3f}' for t in times)})")
