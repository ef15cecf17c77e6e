"""kernels.adamw against torch's fused AdamW on GPT-2 124M's 75 tensors (fp32, 28 bytes moved a parameter), each timed
by kernels.choose.graph_ms (10 steps in a CUDA graph, the learning rate a device tensor as StepGraph has it), in turn
over 3 rounds; the kernel's tile settings swept (BLOCK elements, ITERS of them a program: the kernel as calls 4-5
ran it, before its loop went). Run from the repo root."""
import importlib
import os
import statistics
import sys

import torch

sys.path.insert(0, os.getcwd())
import kernels  # noqa: E402
from kernels.choose import graph_ms  # noqa: E402

adamw_module = importlib.import_module("kernels.adamw")
V, T, C = 50304, 1024, 768
shapes = [(V, C), (T, C)] + [s for _ in range(12) for s in ((C,), (3 * C, C), (C, C), (C,), (4 * C, C), (C, 4 * C))] + [(C,)]
count = sum(torch.Size(s).numel() for s in shapes)
dev = "cuda"
p = [torch.randn(s, device=dev) * 0.02 for s in shapes]
g = [torch.randn(s, device=dev) * 1e-3 for s in shapes]
m = [torch.zeros_like(t) for t in p]
v = [torch.zeros_like(t) for t in p]
steps = [torch.zeros((), device=dev) for _ in p]
lr = torch.tensor(6e-4, device=dev)
hyper = dict(lr=lr, beta1=0.9, beta2=0.95, weight_decay=0.1, eps=1e-8)


def ours(block, iters, warps):
    def run():
        adamw_module.BLOCK, adamw_module.ITERS, adamw_module.NUM_WARPS = block, iters, warps
        kernels.adamw(p, g, m, v, steps, **hyper, backend="triton")
    return run


runs = {"torch fused": lambda: kernels.adamw_ref(p, g, m, v, steps, **hyper)}
SETTINGS = [(1024, 8, 4), (1024, 4, 4), (512, 16, 4), (2048, 4, 8), (2048, 8, 8), (4096, 2, 8), (1024, 16, 4), (1024, 2, 4)]
if len(sys.argv) > 1:  # settings as BLOCKxITERSxWARPS,...
    SETTINGS = [tuple(map(int, s.split("x"))) for s in sys.argv[1].split(",")]
for setting in SETTINGS:
    runs["ours %d x %d, %d warps" % setting] = ours(*setting)
times = {name: [] for name in runs}
for _ in range(3):
    for name, run in runs.items():
        times[name].append(graph_ms(run))
print(f"{len(p)} tensors, {count / 1e6:.2f}M parameters, {28 * count / 1e9:.2f} GB a step")
for name, ts in times.items():
    ms = statistics.median(ts)
    print(f"  {name:28s} {ms * 1e3:8.1f} us  {28 * count / ms / 1e6:7.1f} GB/s   rounds: {', '.join(f'{t * 1e3:.1f}' for t in ts)}")
