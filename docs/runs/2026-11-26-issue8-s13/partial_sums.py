"""The norm backward's weight-gradient partial sums, (2, programs, N) fp32 summed over programs: torch's
sum over the middle dimension (as before) against the same numbers stored (2, N, programs) and summed over the
last, contiguous dimension; eager, and compiled (Inductor's reduction). us per call, CUDA graph of 100 calls.
Call 2 ran a copy of kernels.choose.graph_ms written here (100 calls, median of 5 replays); it now calls
graph_ms itself (median of 10 replays)."""
import os
import sys
sys.path.insert(0, os.getcwd())  # run from the repository root
import torch
from kernels.choose import graph_ms

us = lambda fn: graph_ms(fn, calls=100) * 1e3
for shape in ((2, 264, 768), (264, 768), (2, 132, 768), (2, 264, 3072)):
    middle = torch.randn(shape, device='cuda')
    last = middle.transpose(-1, -2).contiguous()
    assert torch.allclose(middle.sum(-2), last.sum(-1), rtol=1e-5, atol=1e-5)
    comp_mid, comp_last = torch.compile(lambda t: t.sum(-2)), torch.compile(lambda t: t.sum(-1))
    print(f"{str(shape):16s} sum(-2) {us(lambda: middle.sum(-2)):6.2f} us | transposed sum(-1) "
          f"{us(lambda: last.sum(-1)):6.2f} us | compiled {us(lambda: comp_mid(middle)):6.2f} / "
          f"{us(lambda: comp_last(last)):6.2f} us", flush=True)
