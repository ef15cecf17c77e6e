"""
Does cuBLAS without a workspace (CUBLAS_WORKSPACE_CONFIG=:0:0, model.cublas_without_workspace, the training
steps' default since the fifteenth session) cost host time per matmul in eager steps? (issue 8, nineteenth
session: call 1's cProfile put 137 us of own time on each F.linear of the chosen eager step at 1 x 128.)
Run once per setting, each in its own process (cuBLAS reads the variable once):
    python docs/runs/2026-11-26-issue8-s19/workspace_host.py default|none
Prints: host us per call of F.linear and of a matmul's backward products (no sync inside the loop, small shapes:
the host's time), then eager_gap.py's step and host columns for the chosen set and the baseline.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from model import cublas_without_workspace  # noqa: E402
from kernels.choose import time_ms  # noqa: E402


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


def main(mode):
    if mode == 'none':
        cublas_without_workspace()
    print(f"mode {mode}: CUBLAS_WORKSPACE_CONFIG={os.environ.get('CUBLAS_WORKSPACE_CONFIG')!r}")
    x = torch.randn(128, 768, device='cuda', dtype=torch.bfloat16)
    w = torch.randn(3072, 768, device='cuda', dtype=torch.bfloat16)
    g = torch.randn(128, 3072, device='cuda', dtype=torch.bfloat16)
    print(f"  host us per call: F.linear {host_us(lambda: F.linear(x, w)):.1f}, "
          f"g @ w {host_us(lambda: g @ w):.1f}, g.T @ x {host_us(lambda: g.t() @ x):.1f}, "
          f"torch.add {host_us(lambda: torch.add(x, x)):.1f}", flush=True)
    import eager_gap  # noqa: E402  (after the variable: it imports nothing that calls cuBLAS)
    for r in range(2):
        for name in ('chosen', 'baseline'):
            model = eager_gap.build(name)
            _, step = eager_gap.steps(model, 12, 1024)
            _, small = eager_gap.steps(model, 1, 128)
            print(f"  {name:10s} step {time_ms(step, reps=30, warmup=10):6.2f} ms, host {time_ms(small, reps=30, warmup=10):6.2f} ms"
                  f"   round {r}", flush=True)
            del model, step, small
            torch.cuda.empty_cache()


if __name__ == '__main__':
    main(sys.argv[1])
