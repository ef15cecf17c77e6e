"""
bench.py --startup: time to first step. train.py runs three times in fresh processes, from launch to its first logged
iteration: with empty Triton, Inductor and kernels_cache caches (cold), then twice with the caches that run filled
(warm, warm again: the first warm start still adds to the caches, the second shows a warm start's steady state).
Random GPT-2 token ids stand in for the dataset; the rest (model, batch, evaluation before the first step,
compilation, 'auto''s timing of the ops) is the config's. The seconds are taken when train.py prints each line
that closes a stage (STAGES).
"""
import os
import sys
import time
import shutil
import subprocess

import numpy as np

from data.common import write_splits, GPT2_VOCAB_SIZE

# the stages of a start, each closed by the first line train.py prints that begins so
STAGES = {'imports, config': 'tokens per iteration', 'kernels chosen, model built': 'number of parameters',
          'evaluated (step 0:)': 'step 0:', 'first step (iter 0:)': 'iter 0:'}
STARTS = ('cold', 'warm', 'warm again')

def run(config_file, train_args, out_dir):
    """{'command': ..., start: {stage: seconds from launch} for each of STARTS}; prints a table."""
    root = os.path.join(out_dir, 'startup')
    shutil.rmtree(root, ignore_errors=True)
    data, caches = os.path.join(root, 'data'), os.path.join(root, 'caches')
    tokens = np.random.default_rng(0).integers(GPT2_VOCAB_SIZE, size=1_100_000)  # no meta.json: GPT-2 BPE
    write_splits(data, tokens[:1_000_000], tokens[1_000_000:], {})
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(caches, 'triton'),
               TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, 'inductor'),
               KERNELS_CACHE=os.path.join(caches, 'kernels_cache.json'))
    command = [sys.executable, 'train.py', config_file, f'--dataset={data}', '--max_iters=0',
               f"--out_dir={os.path.join(root, 'out')}", *train_args]
    print(f"\ntime to first step: {' '.join(command[1:])}, cold caches then warm twice", flush=True)
    results = dict(command=' '.join(command[1:]))
    for start in STARTS:
        seconds, t0 = {}, time.perf_counter()
        p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                             cwd=os.path.dirname(os.path.abspath(__file__)))
        lines = []
        for line in p.stdout:
            lines.append(line)
            stage = next((s for s, start_of in STAGES.items() if line.startswith(start_of) and s not in seconds), None)
            if stage:
                seconds[stage] = time.perf_counter() - t0
        if p.wait() != 0 or len(seconds) < len(STAGES):
            raise SystemExit(f"error: train.py's {start} start failed or printed no first step:\n"
                             + ''.join(lines[-20:]))
        results[start] = seconds
    width = max(map(len, STAGES))
    print(f"{'seconds from launch to':<{width}}" + ''.join(f"  {start:>10}" for start in STARTS))
    for stage in STAGES:
        print(f"{stage:<{width}}" + ''.join(f"  {results[start][stage]:10.1f}" for start in STARTS))
    return results
