"""
Is CUBLAS_WORKSPACE_CONFIG read once per process in this torch, or at every cuBLAS call? (issue 8, nineteenth
session). Host us per F.linear (bf16, 128 x 768 by 768 x 3072; no sync inside the loop) and the cuBLAS kernels a
CUDA graph of one product records, as the variable is set and unset while the process runs.
Run: python docs/runs/2026-11-26-issue8-s19/workspace_probe.py, and with CUBLAS_WORKSPACE_CONFIG=:0:0 set before it starts
"""
import os
import time

import torch
import torch.nn.functional as F

print(torch.__version__, [n for n in dir(torch._C) if 'orkspace' in n.lower() or 'blas' in n.lower()])
x = torch.randn(128, 768, device='cuda', dtype=torch.bfloat16)
w = torch.randn(3072, 768, device='cuda', dtype=torch.bfloat16)
big = torch.randn(12288, 768, device='cuda', dtype=torch.bfloat16)


def host_us(fn, calls=2000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return t


def graph_kernels():
    """Names of the kernels a CUDA graph of one GPT-2-sized product records (memsets show cooperative kernels)."""
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        F.linear(big, w)  # warm-up on the capturing stream
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        F.linear(big, w)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        g.replay()
        torch.cuda.synchronize()
    return sorted({e.name[:60] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def report(label):
    print(f"{label:32s} (variable {os.environ.get('CUBLAS_WORKSPACE_CONFIG')!r}) F.linear host {host_us(lambda: F.linear(x, w)):6.1f} us; graph: {graph_kernels()}", flush=True)


report("at the start")
os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':0:0'
os.environ['CUBLASLT_WORKSPACE_SIZE'] = '0'
report("set to :0:0 while running")
torch._C._cuda_clearCublasWorkspaces()
report("set, workspaces cleared")
del os.environ['CUBLAS_WORKSPACE_CONFIG'], os.environ['CUBLASLT_WORKSPACE_SIZE']
torch._C._cuda_clearCublasWorkspaces()
report("unset again, workspaces cleared")
