"""
Where the eager step's host time goes (issue 8, twentieth session). The nineteenth session measured, at 1 x 128 tokens
(where the GPU waits for the host), ours with PyTorch's ops at 26.6 ms a step against the baseline's 19.6, though on
the CPU machine our model makes fewer aten calls than the baseline: the extra is something CUDA does.
1. Host time at 1 x 128, three rounds in turn, for the baseline, the chosen set, and ours with PyTorch's ops with each
   of the three settings that set it apart from the baseline turned off in turn (the bf16 stream, the per-block weight
   cast, the tied matrix's scatter), each step split into forward, backward and optimizer by the host's clock.
2. torch.profiler (CPU + CUDA) of 5 steps of the baseline, ours with PyTorch's ops and the chosen set at 1 x 128: the
   CUDA runtime calls (launches, syncs, copies) and the ops by own CPU time.
Run: python docs/runs/2026-11-26-issue8-s20/host_ablation.py
"""
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import torch  # noqa: E402
from torch.profiler import profile, ProfilerActivity  # noqa: E402

from model import GPTConfig, GPT  # noqa: E402

CONFIG = GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, bias=False, dropout=0.0)
TRITON_SET = dict(layer_norm=True, mlp=False, attention=True, cross_entropy=True)
TORCH_SET = dict(layer_norm=False, mlp=False, attention=False, cross_entropy=False)
MODELS = {
    'baseline': dict(kernels='torch', cast_per_block=False, scatter_embedding_grad=False),
    'chosen': dict(overrides=TRITON_SET, autocast_residual=True),
    'ours torch': dict(overrides=TORCH_SET, autocast_residual=True),
    'ours torch, fp32 stream': dict(overrides=TORCH_SET),
    'ours torch, no block cast': dict(overrides=TORCH_SET, autocast_residual=True, cast_per_block=False),
    'ours torch, no scatter': dict(overrides=TORCH_SET, autocast_residual=True, scatter_embedding_grad=False),
}


def build(name):
    torch.manual_seed(1337)
    args = dict(dict(kernels='auto', device_type='cuda'), **MODELS[name])
    return GPT(CONFIG, **args).cuda()


def phases(model, B=1, T=128, reps=30, warmup=10):
    """Median host ms of (forward, backward, optimizer, whole step) at B x T, the GPU synced between steps."""
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
    X = torch.randint(CONFIG.vocab_size, (B, T), device='cuda')
    rows = []
    for i in range(warmup + reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast('cuda', dtype=torch.bfloat16):
            _, loss = model(X, X)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        if i >= warmup:
            rows.append([(t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (t4 - t0) * 1e3])
    return [statistics.median(c) for c in zip(*rows)], optimizer, X


def main():
    results = {}
    print(f"{'model':28s} {'forward':>8s} {'backward':>8s} {'optim':>8s} {'step':>8s}   (host ms at 1 x 128; step: to the sync)")
    for r in range(3):
        for name in MODELS:
            model = build(name)
            row, _, _ = phases(model)
            results.setdefault(name, []).append(row)
            print(f"{name:28s} " + " ".join(f"{v:8.2f}" for v in row) + f"   round {r}", flush=True)
            del model
            torch.cuda.empty_cache()
    print("\nmedians over rounds")
    for name, rows in results.items():
        print(f"{name:28s} " + " ".join(f"{statistics.median(c):8.2f}" for c in zip(*rows)))

    for name in ('baseline', 'ours torch', 'chosen'):
        model = build(name)
        _, optimizer, X = phases(model, reps=1)

        def step():
            with torch.autocast('cuda', dtype=torch.bfloat16):
                _, loss = model(X, X)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                step()
            torch.cuda.synchronize()
        events = prof.key_averages()
        runtime = sorted((e for e in events if e.key.startswith(('cuda', 'cu'))), key=lambda e: -e.self_cpu_time_total)
        print(f"\n== {name}: CUDA runtime and driver calls, 5 steps (count, own CPU us in all)")
        for e in runtime[:20]:
            print(f"  {e.key:45s} {e.count:7d} {e.self_cpu_time_total:10.0f}")
        ops = sorted((e for e in events if not e.key.startswith(('cuda', 'cu'))), key=lambda e: -e.self_cpu_time_total)
        print(f"== {name}: ops by own CPU time, 5 steps (count, own CPU us, CUDA us)")
        for e in ops[:30]:
            print(f"  {e.key[:60]:60s} {e.count:7d} {e.self_cpu_time_total:10.0f} {e.device_time_total:10.0f}")
        del model, optimizer
        torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
