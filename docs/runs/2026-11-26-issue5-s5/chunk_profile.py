"""Issue 5: GPU time per kernel of the fused linear + cross-entropy at GPT-2's head (12288 x 768,
V = 50304, bf16, forward + backward) for several chunk sizes: which part gains with bigger chunks.
Profiler (CUPTI) over back-to-back calls, after warm-up; us per call.
$ python docs/runs/2026-11-26-issue5-s5/chunk_profile.py"""
import os
import sys
import collections
sys.path.insert(0, os.getcwd())  # run from the repository root
import importlib
import torch
from torch.autograd import DeviceType
lce = importlib.import_module('kernels.linear_cross_entropy')

N, H, V, CALLS = 12288, 768, 50304, 10
torch.manual_seed(0)
x = (torch.randn(N, H, device='cuda') * 0.5).to(torch.bfloat16).requires_grad_()
w = (torch.randn(V, H, device='cuda') * 0.02).to(torch.bfloat16).requires_grad_()
t = torch.randint(V, (N,), device='cuda')

def run():
    torch.autograd.grad(lce.linear_cross_entropy(x, w, t), (x, w))

for rnd in range(2):
    for mib in (200, 300, 400, 600):
        lce.CHUNK_BYTES = mib * 2 ** 20
        rows = lce._chunk_rows(N, V, 2)
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                run()
            torch.cuda.synchronize()
        spent, count = collections.Counter(), collections.Counter()
        for e in prof.events():
            if e.device_type == DeviceType.CUDA:
                spent[e.name] += e.device_time_total / CALLS
                count[e.name] += 1 / CALLS
        print(f"round {rnd}, chunks of {rows} rows ({-(-N // rows)}): GPU busy {sum(spent.values()):.0f} us per call")
        for name, us in spent.most_common(8):
            print(f"  {us:8.1f} us  {count[name]:4.1f} x  {name[:90]}")
