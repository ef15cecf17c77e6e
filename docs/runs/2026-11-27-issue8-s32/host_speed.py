"""The host's speed on this machine, to read beside the steps launched from Python: a pure-Python loop, and the
host time of small CUDA launches (a torch add and a Triton kernel), us per call, median of 5 rounds."""
import statistics
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def per_call_us(fn, calls):
    rounds = []
    for _ in range(5):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter() - t) / calls * 1e6)  # host time: the launches queue, nothing waits
        torch.cuda.synchronize()
    return statistics.median(rounds)


def python_loop():
    s = 0
    for i in range(1000):
        s += i * i
    return s


x = torch.zeros(1024, device='cuda')
for name, fn, calls in [("python loop of 1000 (us)", python_loop, 2000),
                        ("torch add_ launch (us)", lambda: x.add_(1), 5000),
                        ("triton launch (us)", lambda: _add_one[(1,)](x, 1024, BLOCK=1024), 5000)]:
    fn()
    print(f"{name:28s} {per_call_us(fn, calls):8.2f}")
