"""
The eager step's host time once cuBLAS keeps its workspace (issue 8, nineteenth session, after call 4): eager_gap.py's
three models (chosen, ours with PyTorch's ops, the baseline) without its process-wide :0:0, step and host columns
(ms; host: the step at 1 x 128 tokens, where the GPU waits for the host), three rounds in turn; then cProfile of the
chosen step at 1 x 128, by own time and by cumulative time.
Run: python docs/runs/2026-11-26-issue8-s19/eager_host.py
"""
import cProfile
import io
import os
import pstats
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
import torch  # noqa: E402

import model  # noqa: E402
model.cublas_without_workspace = None  # eager_gap.py imports the function 3a9efe8 had; its main() (which called it) is not run
import eager_gap  # noqa: E402
from kernels.choose import time_ms  # noqa: E402

rows = {}
for r in range(3):
    for name in ('chosen', 'ours, PyTorch ops', 'baseline'):
        model = eager_gap.build(name)
        _, step = eager_gap.steps(model, 12, 1024)
        _, small = eager_gap.steps(model, 1, 128)
        row = (time_ms(step, reps=30, warmup=10), time_ms(small, reps=30, warmup=10))
        rows.setdefault(name, []).append(row)
        print(f"{name:20s} step {row[0]:6.2f}  host {row[1]:6.2f}   round {r}", flush=True)
        del model, step, small
        torch.cuda.empty_cache()
for name, rs in rows.items():
    print(f"median {name:20s} step {statistics.median(x[0] for x in rs):6.2f}  host {statistics.median(x[1] for x in rs):6.2f}")

model = eager_gap.build('chosen')
_, small = eager_gap.steps(model, 1, 128)
for _ in range(10):
    small()
torch.cuda.synchronize()
prof = cProfile.Profile()
prof.enable()
for _ in range(20):
    small()
torch.cuda.synchronize()
prof.disable()
for key, n in (('tottime', 40), ('cumtime', 45)):
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats(key).print_stats(n)
    print(f"\ncProfile, 20 chosen steps at 1 x 128, by {key}\n" + out.getvalue())
