"""The attention's products in GPT-2's step (12 x 1024 tokens, bf16), PyTorch's call against matmul_plan's measured
cuBLASLt algorithm, with cuBLAS without its workspace as StepGraph records a step: is a Linear through
matmul_plan worth making for them? us per call, median of 5 rounds of CUDA graphs of 20 calls, in turn."""
import os, statistics, sys
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":0:0")
os.environ.setdefault("CUBLASLT_WORKSPACE_SIZE", "0")
import torch
sys.path.insert(0, ".")
from kernels.matmul import matmul_plan, _LtPlan

M = 12288
bf = dict(device="cuda", dtype=torch.bfloat16)
cases = {}
for name, (n_out, n_in) in {"qkv": (2304, 768), "attn proj": (768, 768)}.items():
    x, w, dy = torch.randn(M, n_in, **bf), torch.randn(n_out, n_in, **bf) * n_in ** -0.5, torch.randn(M, n_out, **bf)
    y, dx = torch.empty(M, n_out, **bf), torch.empty(M, n_in, **bf)
    dw, dw32 = torch.empty(n_out, n_in, **bf), torch.empty(n_out, n_in, device="cuda")
    cases[f"{name} fwd"] = (lambda x=x, w=w, y=y: torch.mm(x, w.T, out=y), (x, w.T, y))
    cases[f"{name} dgrad"] = (lambda dy=dy, w=w, dx=dx: torch.mm(dy, w, out=dx), (dy, w, dx))
    cases[f"{name} wgrad"] = (lambda dy=dy, x=x, dw=dw: torch.mm(dy.T, x, out=dw), (dy.T, x, dw))
    cases[f"{name} wgrad fp32"] = (lambda dy=dy, x=x, dw=dw32: dw.copy_(torch.mm(dy.T, x)), (dy.T, x, dw32))
variants = {}
for name, (torch_call, args) in cases.items():
    plan = matmul_plan(*args)
    variants[f"{name}: torch"] = torch_call
    variants[f"{name}: plan" + ("" if isinstance(plan, _LtPlan) else " (PyTorch's call won)")] = \
        lambda plan=plan, args=args: plan(*args)
graphs = {}
for name, fn in variants.items():
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(20):
            fn()
    graphs[name] = g
times = {n: [] for n in graphs}
for _ in range(5):
    for name, g in graphs.items():
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); g.replay(); e.record(); torch.cuda.synchronize()
        times[name].append(s.elapsed_time(e) * 1000 / 20)
for name, t in times.items():
    print(f"{name:40s} {statistics.median(t):8.1f} us   (rounds {min(t):.1f}-{max(t):.1f})")
