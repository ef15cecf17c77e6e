"""Host time of GPT-2's MLP, PyTorch's against kernels.gelu_mlp (eager, bf16 weights as the model's per-block cast gives
them): us per forward + backward with the GPU synced only at the end of each round (host-bound at this rate?), then
cProfile of ours, by own time. 'auto''s loop measure had ours at 1.3-1.9 ms against PyTorch's 0.66-1.04 per call."""
import cProfile, pstats, statistics, sys, time
import torch
sys.path.insert(0, ".")
import kernels

torch.manual_seed(0)
bf = dict(device="cuda", dtype=torch.bfloat16)
x = torch.randn(12, 1024, 768, **bf, requires_grad=True)
w1 = (torch.randn(3072, 768, **bf) * 768 ** -0.5).requires_grad_()
w2 = (torch.randn(768, 3072, **bf) * 3072 ** -0.5).requires_grad_()
dy = torch.randn(12, 1024, 768, **bf)


def step(be):
    y = kernels.gelu_mlp(x, w1, w2, backend=be)
    torch.autograd.grad(y, (x, w1, w2), dy)


for be in ("torch", "triton"):
    for _ in range(5):
        step(be)
torch.cuda.synchronize()
res = {"torch": [], "triton": []}
for _ in range(7):
    for be in res:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            step(be)
        host = time.perf_counter() - t0
        torch.cuda.synchronize()
        res[be].append((host / 20 * 1e6, (time.perf_counter() - t0) / 20 * 1e6))
for be, r in res.items():
    print(f"{be}: host {statistics.median(h for h, _ in r):.0f} us per call (launches returned), "
          f"{statistics.median(w for _, w in r):.0f} us with the GPU's work done")
prof = cProfile.Profile()
prof.enable()
for _ in range(50):
    step("triton")
prof.disable()
torch.cuda.synchronize()
pstats.Stats(prof).sort_stats("tottime").print_stats(28)
