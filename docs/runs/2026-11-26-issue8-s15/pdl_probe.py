"""
What programmatic dependent launch (PDL) saves per kernel boundary inside a CUDA graph on this GPU:
a chain of small Triton kernels (each reads the last one's output), launched with and without
launch_pdl=True, alone and with a cuBLAS matmul before each one. Prediction and outcome:
docs/perf-notes.md (fifteenth session). Run on the GPU: python docs/runs/2026-11-26-issue8-s15/pdl_probe.py
"""
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from kernels.choose import graph_ms  # noqa: E402


@triton.jit
def _step_kernel(X, Y, n, PDL: tl.constexpr, BLOCK: tl.constexpr):
    if PDL:
        tl.extra.cuda.gdc_wait()  # X is the last kernel's output
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
    tl.store(Y + offs, x * 0.5 + 1.0, mask=offs < n)


def chain(n, pdl, links=50, with_mm=False):
    bufs = [torch.randn(n, device='cuda', dtype=torch.bfloat16) for _ in range(2)]
    a = torch.randn(2048, 768, device='cuda', dtype=torch.bfloat16)
    b = torch.randn(768, 768, device='cuda', dtype=torch.bfloat16)
    BLOCK = 1024
    def run():
        for i in range(links):
            if with_mm:
                torch.mm(a, b)
            _step_kernel[(triton.cdiv(n, BLOCK),)](bufs[i % 2], bufs[1 - i % 2], n, PDL=pdl, BLOCK=BLOCK,
                                                     launch_pdl=pdl)
    return graph_ms(run, calls=4) * 1e3 / links  # us per link


if __name__ == '__main__':
    print(torch.cuda.get_device_name(), torch.__version__, triton.__version__)
    for with_mm in (False, True):
        for n in (2**16, 2**20, 12288 * 768):
            rows = []
            for _ in range(3):
                rows.append((chain(n, False, with_mm=with_mm), chain(n, True, with_mm=with_mm)))
            off = sorted(r[0] for r in rows)[1]
            on = sorted(r[1] for r in rows)[1]
            print(f"{'mm + ' if with_mm else ''}kernel of {n * 2 / 2**20:6.2f} MiB: us per link, no PDL {off:7.2f}, "
                  f"PDL {on:7.2f}, saved {off - on:5.2f}  (rounds: {', '.join(f'{a:.2f}/{b:.2f}' for a, b in rows)})")
