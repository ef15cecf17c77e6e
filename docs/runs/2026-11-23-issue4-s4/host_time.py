"""Host time of the eager attention call (forward + backward) at GPT-2's shape: per call in a loop,
and where the Python time goes (cProfile, the Triton path), against SDPA's path."""
import os, sys, time, cProfile, pstats
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), '../../..')))
import torch
import kernels

B, H, T, D = 12, 12, 1024, 64
qkv = torch.randn(B, T, 3 * H, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
do = torch.randn(B, H, T, D, device='cuda', dtype=torch.bfloat16)

def call(be):
    kernels.flash_attention_qkv(qkv, H, backend=be).backward(do)

for be in ('triton', 'torch'):
    for _ in range(10):
        call(be)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(50):
        call(be)
    host = (time.perf_counter() - t0) / 50 * 1e3
    torch.cuda.synchronize()
    total = (time.perf_counter() - t0) / 50 * 1e3
    print(f"{be}: host {host:.3f} ms per call before the sync, {total:.3f} ms with it")
pr = cProfile.Profile()
pr.enable()
for _ in range(50):
    call('triton')
pr.disable()
torch.cuda.synchronize()
pstats.Stats(pr).sort_stats('cumulative').print_stats(25)
