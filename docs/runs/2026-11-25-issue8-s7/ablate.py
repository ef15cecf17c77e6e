"""
Where the eager step's host time goes, by ablation (issue 8, seventh session). GPT-2 124M as bench.py
builds it, eager, bf16 autocast, the residual stream in bf16, Triton for LayerNorm, attention and the
loss (the set 'auto' picked last session). For each variant: the host's ms per step at a batch too
small for the GPU to limit (1 x 128 tokens: the time per step is the host's) and the full step
(12 x 1024, ms per step, synchronised per step as bench.py times it). Medians of 30 steps after 10.
Variants (timing only, results not used):
- chosen: as built;
- torch: the eager baseline's ops (PyTorch everywhere), same stream;
- bf16 weights: the matrices stored in bf16, so autocast casts none of them (nor casts their
  gradients back): what the autocast weight casts cost;
- no launch: our kernels' launches replaced by nothing: what our launches cost beyond our Python.
Then a torch.profiler summary of the chosen step's host side, and host us per call of a few pieces.
Run: python docs/runs/2026-11-25-issue8-s7/ablate.py
"""
import os
import sys
import time
import statistics
import importlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import torch  # noqa: E402

import kernels.backend as backend  # noqa: E402
from model import GPTConfig, GPT  # noqa: E402

MODULES = [importlib.import_module(f"kernels.{m}") for m in ('norm', 'gelu', 'attention', 'linear_cross_entropy')]
T_, F_ = True, False
CHOSEN = dict(layer_norm=T_, mlp=F_, attention=T_, cross_entropy=T_)


class _Stub:
    def __getitem__(self, grid):
        return lambda *args, **meta: None


def make_step(B, T, overrides, setting='auto', bf16_weights=False):
    torch.manual_seed(1337)
    config = GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, bias=False, dropout=0.0)
    model = GPT(config, kernels=setting, device_type='cuda', overrides=overrides, autocast_residual=True).cuda()
    if bf16_weights:
        for p in model.parameters():
            if p.dim() >= 2:
                p.data = p.data.bfloat16()
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
    data = torch.randint(50304, (4, 2, B, T), device='cuda')
    X, Y = torch.empty_like(data[0, 0]), torch.empty_like(data[0, 1])
    batches = iter(range(10**9))

    def step():
        i = next(batches) % len(data)
        X.copy_(data[i, 0])
        Y.copy_(data[i, 1])
        with torch.autocast('cuda', dtype=torch.bfloat16):
            _, loss = model(X, Y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss
    return step


def time_step(step, warmup=10, timed=30):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    wall, host = [], []
    for _ in range(timed):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        t0 = time.perf_counter()
        step()
        host.append((time.perf_counter() - t0) * 1e3)
        end.record()
        end.synchronize()
        wall.append(start.elapsed_time(end))
    return statistics.median(wall), statistics.median(host)


def variants():
    return {
        'chosen': lambda B, T: make_step(B, T, CHOSEN),
        'torch': lambda B, T: make_step(B, T, None, setting='torch'),
        'chosen, bf16 weights': lambda B, T: make_step(B, T, CHOSEN, bf16_weights=True),
        'torch, bf16 weights': lambda B, T: make_step(B, T, None, setting='torch', bf16_weights=True),
    }


def run_variants(rounds=2):
    print("1. host ms per step at 1 x 128 tokens (GPU idle most of the step) | ms per step at 12 x 1024, host ms")
    results = {}
    for r in range(rounds):  # interleaved, so that drift in the host's speed shows as spread
        for name, make in variants().items():
            small = time_step(make(1, 128))
            torch.cuda.empty_cache()
            full = time_step(make(12, 1024))
            torch.cuda.empty_cache()
            results.setdefault(name, []).append((small[1], full[0], full[1]))
            print(f"  round {r}: {name:24s} host {small[1]:6.2f} | step {full[0]:6.2f}, host {full[1]:6.2f}", flush=True)
    # our launches replaced by nothing (small batch only: host time; results meaningless)
    saved = [m.launch for m in MODULES]
    for m in MODULES:
        m.launch = lambda kernel: _Stub()
    try:
        for r in range(rounds):
            print(f"  round {r}: chosen, no launch of ours  host {time_step(make_step(1, 128, CHOSEN))[1]:6.2f}", flush=True)
    finally:
        for m, f in zip(MODULES, saved):
            m.launch = f


def profile_host():
    from torch.profiler import profile, ProfilerActivity
    step = make_step(1, 128, CHOSEN)
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    print("\n2. torch.profiler, 5 chosen steps at 1 x 128, host side by self CPU time (profiler overhead included)")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=40, max_name_column_width=60))


def pieces():
    def us(fn, calls=3000):
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t = (time.perf_counter() - t0) / calls * 1e6
        torch.cuda.synchronize()
        return t
    part = torch.randn(1, 132, 768, device='cuda')
    x = torch.randn(128, 768, device='cuda', dtype=torch.bfloat16)
    w = torch.randn(768, 768, device='cuda', requires_grad=True)
    print("\n3. host us per call")
    print(f"  partial.sum(1) (1, 132, 768) fp32: {us(lambda: part.sum(1)):.1f}")
    print(f"  torch.empty (128, 768) bf16: {us(lambda: torch.empty(128, 768, device='cuda', dtype=torch.bfloat16)):.1f}")
    print(f"  torch.add bf16: {us(lambda: torch.add(x, x)):.1f}")
    print(f"  w.to(bf16) (autocast's weight cast, no grad): {us(lambda: w.detach().to(torch.bfloat16)):.1f}")
    with torch.autocast('cuda', dtype=torch.bfloat16):
        print(f"  F.linear under autocast, fp32 weight: {us(lambda: torch.nn.functional.linear(x, w)):.1f}")
    wb = w.detach().bfloat16().requires_grad_()
    with torch.autocast('cuda', dtype=torch.bfloat16):
        print(f"  F.linear under autocast, bf16 weight: {us(lambda: torch.nn.functional.linear(x, wb)):.1f}")


if __name__ == '__main__':
    run_variants()
    profile_host()
    pieces()
