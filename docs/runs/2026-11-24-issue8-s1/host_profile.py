"""Host time per eager call (forward + backward) of the Triton LayerNorm (with residual) and
attention against PyTorch's, on inputs small enough that the GPU never limits, and where the
Triton path's host time goes (cProfile, by own time). Run from the repo root."""
import os, sys, time, cProfile, pstats
sys.path.insert(0, os.getcwd())
import torch
from kernels.choose import op_cases, _run

B, T, C, H = 1, 64, 768, 12
cases = op_cases(['layer_norm', 'attention'], B, T, C, H, None, 50304, 3072, False, torch.bfloat16, 'cuda')

def host_ms(f, inputs, n=300):
    with torch.autocast('cuda', dtype=torch.bfloat16):
        for _ in range(20):
            _run(f, inputs)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            _run(f, inputs)
        host = (time.perf_counter() - t0) / n * 1e3
        torch.cuda.synchronize()
    return host

for op, (shapes, make, fn) in cases.items():
    inputs = make()
    for be in ('triton', 'torch'):
        print(f"{op} {shapes} {be}: {host_ms(fn(be), inputs):.3f} ms host per forward+backward", flush=True)
    pr = cProfile.Profile()
    f = fn('triton')
    with torch.autocast('cuda', dtype=torch.bfloat16):
        pr.enable()
        for _ in range(200):
            _run(f, inputs)
        pr.disable()
    torch.cuda.synchronize()
    print(f"--- {op}, Triton path, 200 calls, by own time")
    pstats.Stats(pr).sort_stats('tottime').print_stats(22)
