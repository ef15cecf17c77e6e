"""
Is GPT-2's eager training step (bench.py's 'kernels eager') bound by the host, and what does
the lean eager launch (kernels/backend.py, LeanLaunch) change?
1. Host time per launch: norm_fwd (one launch) and flash_attention_fwd (one launch through an
   autotuner) on tiny inputs, 2000 calls, Triton's own launch against the lean one.
2. The eager step (bench.py's workload: GPT-2 124M, 12 x 1024, bf16 autocast, AdamW) with each
   op set: ms per step (median of 30 after 10, synchronised per step as bench.py times it) and
   the host's time per step (until step() returns, before the synchronisation), lean launch on
   and off.
3. cProfile of 5 steps of the all-Triton eager step with the lean launch, by own time.
Run: python docs/runs/2026-11-25-issue8-s6/eager_host.py [--quick]
"""
import os
import sys
import time
import pstats
import cProfile
import statistics
import importlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import torch  # noqa: E402
from torch.library import wrap_triton  # noqa: E402
from torch._library.triton import set_wrap_triton_enabled  # noqa: E402

import kernels.backend as backend  # noqa: E402
from model import GPTConfig, GPT  # noqa: E402

quick = '--quick' in sys.argv
MODULES = [importlib.import_module(f"kernels.{m}") for m in
           ('norm', 'gelu', 'attention', 'linear_cross_entropy', 'rotary', 'swiglu')]


def lean(on):
    """Every kernels/ module launching through the lean launch (on) or Triton's own (off)."""
    for m in MODULES:
        m.launch = backend.launch if on else wrap_triton


def per_call_us(fn, calls=2000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def launch_costs():
    norm, attention = MODULES[0], MODULES[2]
    x, r = (torch.randn(4, 64, device='cuda', dtype=torch.bfloat16) for _ in range(2))
    w = torch.ones(64, device='cuda')
    q = torch.randn(1, 1, 16, 64, device='cuda', dtype=torch.bfloat16)
    cases = {'norm_fwd (1 launch)': lambda: norm.norm_fwd(x, r, w, None, 1e-5, False, torch.bfloat16),
             'flash_attention_fwd (1 launch, autotuner)': lambda: attention.flash_attention_fwd(q, q, q, True, 0.125)}
    print("1. host time per call, us (tiny inputs; 2000 calls after 50)")
    for name, fn in cases.items():
        times = {}
        for on in (False, True, False, True):
            lean(on)
            with set_wrap_triton_enabled(False):
                times.setdefault(on, []).append(per_call_us(fn))
        lean(True)
        with set_wrap_triton_enabled(False):
            same = all(torch.equal(a, b) for a, b in zip(fn(), (lean(False), fn())[1]))
        lean(True)
        print(f"  {name}: Triton's launch {min(times[False]):.1f}, lean {min(times[True]):.1f} "
              f"(two rounds each, the lower; outputs equal: {same})")
    add = torch.randn(4, 64, device='cuda')
    print(f"  torch.add for scale: {per_call_us(lambda: torch.add(add, add)):.1f}")


def make_step(overrides, kernels_setting, autocast_residual):
    torch.manual_seed(1337)
    config = GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, bias=False, dropout=0.0)
    model = GPT(config, kernels=kernels_setting, device_type='cuda', overrides=overrides,
                autocast_residual=autocast_residual).cuda()
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
    data = torch.randint(50304, (4, 2, 12, 1024), device='cuda')
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
        loss = step()
        host.append((time.perf_counter() - t0) * 1e3)
        end.record()
        end.synchronize()
        wall.append(start.elapsed_time(end))
    return statistics.median(wall), statistics.median(host), loss.item()


def steps():
    T, F = True, False
    sets = {  # name: (kernels, overrides, autocast_residual)
        'baseline eager (PyTorch ops, fp32 stream)': ('torch', None, False),
        "auto's eager picks (CE Triton), bf16 stream": ('auto', dict(layer_norm=F, mlp=F, attention=F, cross_entropy=T), True),
        'LN + CE Triton, bf16 stream': ('auto', dict(layer_norm=T, mlp=F, attention=F, cross_entropy=T), True),
        'LN + attention + CE Triton, bf16 stream': ('auto', dict(layer_norm=T, mlp=F, attention=T, cross_entropy=T), True),
        'all Triton, bf16 stream': ('triton', None, True),
    }
    print("\n2. the eager step: ms per step (synchronised each step), host ms per step (until step() returns), loss")
    for name, (setting, overrides, stream) in sets.items():
        step = make_step(overrides, setting, stream)
        for on in ((False, True) if setting != 'torch' else (True,)):
            lean(on)
            wall, host, loss = time_step(step)
            print(f"  {name}, {'lean' if on else 'Triton'} launch: {wall:.2f} ms/step, host {host:.2f} ms, loss {loss:.4f}",
                  flush=True)
        del step
        torch.cuda.empty_cache()
    return sets


def profile():
    lean(True)
    step = make_step(None, 'triton', True)
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    prof.disable()
    print("\n3. cProfile, 5 all-Triton eager steps, lean launch (times inflated by the profiler)")
    stats = pstats.Stats(prof)
    stats.sort_stats('tottime').print_stats(35)
    stats.sort_stats('cumulative').print_stats(45)


if __name__ == '__main__':
    launch_costs()
    steps()
    if not quick:
        profile()
