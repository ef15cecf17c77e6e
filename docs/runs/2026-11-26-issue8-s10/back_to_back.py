"""Runs bench.py with its step timer replaced: `timed_steps` steps back to back and one synchronisation
at the end (as a training loop that reads the loss only at log intervals), instead of bench's
per-step CUDA events with a synchronisation after each step (as nanoGPT's bench, whose loss.item()
waits each step). The difference is the host latency a step exposes when it starts on an idle GPU.
$ python docs/runs/2026-11-26-issue8-s10/back_to_back.py bench.py --variants=..."""
import os
import sys
import runpy
import torch
sys.path.insert(0, os.getcwd())  # run from the repository root
import kernels.choose

def back_to_back_ms(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / reps

if torch.cuda.is_available():
    kernels.choose.time_ms = back_to_back_ms  # bench.py imports it by name after this
script, *args = sys.argv[1:]
sys.argv = [script, *args]
sys.path[0] = os.path.dirname(os.path.abspath(script))
runpy.run_path(script, run_name='__main__')
