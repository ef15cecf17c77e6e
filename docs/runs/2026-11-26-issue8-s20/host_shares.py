"""
How much of the chosen set's eager host time is our launches, and how much the eager wrapper of each launcher
(kernels/backend.py's for_compile: a context manager per call), in the whole step (issue 8, twentieth session).
The chosen set's step at 1 x 128 tokens (host time: the GPU waits for it), three rounds in turn, as it is and with
- no launch: LeanLaunch.run returns at once (the kernels do not run: the numbers are garbage, the host time is not);
- no wrapper context: wrap_triton off by default in every thread, the context manager a reusable null one;
- both; and ours with PyTorch's ops and the baseline for reference.
Run: python docs/runs/2026-11-26-issue8-s20/host_shares.py
"""
import contextlib
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
import torch  # noqa: E402
import torch._library.triton as library_triton  # noqa: E402

import kernels.backend as kb  # noqa: E402
from host_ablation import build, phases  # noqa: E402

real_run, real_context = kb.LeanLaunch.run, kb.set_wrap_triton_enabled
NULL = contextlib.nullcontext()


def setting(no_launch, no_context):
    kb.LeanLaunch.run = (lambda self, grid, args, meta: None) if no_launch else real_run
    kb.set_wrap_triton_enabled = (lambda enabled: NULL) if no_context else real_context
    library_triton.wrap_triton_enabled_default = not no_context


CASES = [('chosen', False, False), ('chosen, no launch', True, False), ('chosen, no wrapper context', False, True),
         ('chosen, neither', True, True), ('ours torch', False, False), ('baseline', False, False)]

results = {}
print(f"{'model':28s} {'forward':>8s} {'backward':>8s} {'optim':>8s} {'step':>8s}   (host ms at 1 x 128)")
for r in range(3):
    for label, no_launch, no_context in CASES:
        model = build(label.split(',')[0])
        phases(model, reps=1, warmup=3)  # every kernel compiled and cached, launched for real
        setting(no_launch, no_context)
        row, _, _ = phases(model)
        setting(False, False)
        results.setdefault(label, []).append(row)
        print(f"{label:28s} " + " ".join(f"{v:8.2f}" for v in row) + f"   round {r}", flush=True)
        del model
        torch.cuda.empty_cache()
print("\nmedians over rounds")
for label, rows in results.items():
    print(f"{label:28s} " + " ".join(f"{statistics.median(c):8.2f}" for c in zip(*rows)))
