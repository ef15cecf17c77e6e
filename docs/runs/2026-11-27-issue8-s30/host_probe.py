"""Host time per call of kernels.matmul and kernels.gelu_mlp against PyTorch's calls, on shapes small enough that
the GPU never sets the pace (median us per call over rounds of N calls), then a cProfile of gelu_mlp's forward and
backward to say where its host time goes. Run from the repo root on a GPU."""
import cProfile, pstats, statistics, sys, time
sys.path.insert(0, '.')
import torch
import kernels
from kernels import matmul as M

dev, bf = 'cuda', torch.bfloat16
N, ROUNDS = 2000, 5


def per_call(fn):
    fn(); torch.cuda.synchronize()
    times = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        for _ in range(N):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) / N * 1e6)
    return statistics.median(times)


a, b, out = (torch.randn(64, 64, device=dev, dtype=bf) for _ in range(3))
aux = torch.empty_like(out)
plan = M.matmul_plan(a, b, out)
gplan = M.matmul_plan(a, b, out, epilogue='gelu', aux=aux)
print(f"plans: plain {type(plan).__name__} workspace {getattr(plan.algos[plan.chosen], 'workspace', None) if isinstance(plan, M._LtPlan) else '-'}, "
      f"gelu {type(gplan).__name__}")
rows = {
    'torch.mm(out=)': lambda: torch.mm(a, b, out=out),
    'matmul()': lambda: M.matmul(a, b, out),
    'matmul(gelu)': lambda: M.matmul(a, b, out, epilogue='gelu', aux=aux),
    'matmul_plan() only': lambda: M.matmul_plan(a, b, out),
    '_key() only': lambda: M._key(a, b, out, 0.0, None, None),
    'plan.run() only': (lambda: plan.run(plan.algos[plan.chosen], a, b, out)) if isinstance(plan, M._LtPlan) else None,
    'torch.empty(4 MiB)': lambda: torch.empty(1 << 22, dtype=torch.uint8, device=dev),
    'current_stream(dev)': lambda: torch.cuda.current_stream(out.device).cuda_stream,
}
for name, fn in rows.items():
    if fn is not None:
        print(f"{name:24s} {per_call(fn):7.1f} us")

x = torch.randn(64, 64, device=dev, requires_grad=True)
w_fc = torch.randn(256, 64, device=dev, requires_grad=True)
w_proj = torch.randn(64, 256, device=dev, requires_grad=True)
copies = (w_fc.detach().to(bf), w_proj.detach().to(bf))


def mlp(fn):
    def step():
        with torch.autocast('cuda', dtype=bf):
            y = fn()
        y.sum().backward()
    return step

ops = {
    'gelu_mlp_ref fwd+bwd': mlp(lambda: kernels.gelu_mlp(x, w_fc, w_proj, backend='torch')),
    'gelu_mlp fwd+bwd': mlp(lambda: kernels.gelu_mlp(x, w_fc, w_proj, backend='triton')),
    'gelu_mlp copies fwd+bwd': mlp(lambda: kernels.gelu_mlp(x, w_fc, w_proj, backend='triton', copies=copies)),
}
for name, fn in ops.items():
    print(f"{name:24s} {per_call(fn):7.1f} us")

step = ops['gelu_mlp copies fwd+bwd']
prof = cProfile.Profile()
prof.enable()
for _ in range(500):
    step()
prof.disable()
torch.cuda.synchronize()
pstats.Stats(prof).sort_stats('tottime').print_stats(25)
