"""
Host time of each op's forward + backward in eager mode, on inputs too small for the GPU to
limit (so the time per call is the host's), as the model calls them under bf16 autocast:
PyTorch's path; ours with Triton's own launch; with the lean launch; and with every launch
replaced by a stub that launches nothing (what our Python, allocations and autograd cost
without any launch). Then the eager step itself, the op sets interleaved (three rounds) so
that the spread between rounds shows. Run: python docs/runs/2026-11-25-issue8-s6/host_ops.py
"""
import os
import sys
import time
import statistics
import importlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, HERE)
import torch  # noqa: E402
from torch.library import wrap_triton  # noqa: E402

import kernels  # noqa: E402
import kernels.backend as backend  # noqa: E402
from eager_host import make_step, time_step  # noqa: E402

MODULES = [importlib.import_module(f"kernels.{m}") for m in ('norm', 'gelu', 'attention', 'linear_cross_entropy')]


class _Stub:
    def __getitem__(self, grid):
        return lambda *args, **meta: None


def launch_with(how):
    for m in MODULES:
        m.launch = {'triton': wrap_triton, 'lean': backend.launch, 'stub': lambda kernel: _Stub()}[how]


def host_us(fn, calls=500, rounds=5):
    per = []
    for _ in range(rounds):
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(per)


def op_cases():
    bf16 = dict(device='cuda', dtype=torch.bfloat16)
    act = lambda *s: torch.randn(*s, **bf16, requires_grad=True)
    w = torch.ones(768, device='cuda', requires_grad=True)
    x, r = act(1, 64, 768), act(1, 64, 768)
    qkv = act(1, 64, 36, 64)
    h = act(1, 64, 3072)
    xe, we, y = act(1, 64, 768), (torch.randn(512, 768, **bf16) * 0.03).requires_grad_(), torch.randint(512, (1, 64), device='cuda')
    return {
        'layer_norm + residual': lambda be: kernels.layer_norm(x, w, None, 1e-5, residual=r, out_dtype=torch.bfloat16, backend=be)[0],
        'attention (packed qkv)': lambda be: kernels.flash_attention_qkv(qkv, 12, causal=True, backend=be),
        'gelu': lambda be: kernels.gelu(h, None, backend=be),
        'cross_entropy (V=512)': lambda be: kernels.linear_cross_entropy(xe, we, y, backend=be),
    }


def fwd_bwd(f, be):
    with torch.autocast('cuda', dtype=torch.bfloat16):
        out = f(be)
    out.backward(torch.ones_like(out))


print("1. host us per forward + backward, tiny inputs (median of 5 rounds of 500 calls)")
print(f"  {'op':28s} {'PyTorch':>8s} {'ours, Triton launch':>20s} {'ours, lean':>11s} {'ours, no launch':>16s}")
for name, f in op_cases().items():
    times = [host_us(lambda: fwd_bwd(f, 'torch'))]
    for how in ('triton', 'lean', 'stub'):
        launch_with(how)
        times.append(host_us(lambda: fwd_bwd(f, 'triton')))
    launch_with('lean')
    print(f"  {name:28s} {times[0]:8.1f} {times[1]:20.1f} {times[2]:11.1f} {times[3]:16.1f}", flush=True)

print("\n2. the eager step, op sets interleaved: ms/step, host ms/step per round")
T, F = True, False
sets = {
    "auto's eager picks (CE)": ('auto', dict(layer_norm=F, mlp=F, attention=F, cross_entropy=T)),
    'LN + attention + CE': ('auto', dict(layer_norm=T, mlp=F, attention=T, cross_entropy=T)),
    'all Triton': ('triton', None),
}
launch_with('lean')
steps = {name: make_step(overrides, setting, True) for name, (setting, overrides) in sets.items()}
results = {name: [] for name in sets}
for _ in range(3):
    for name, step in steps.items():
        results[name].append(time_step(step)[:2])
for name, runs in results.items():
    print(f"  {name:26s} " + "  ".join(f"{w:.2f} (host {h:.2f})" for w, h in runs), flush=True)
