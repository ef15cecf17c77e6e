"""
'auto''s eager step check, one model after the other (as it was) against the two in turn (model._eager_steps_ms), four
times each, alternating (issue 8, twentieth session). GPT-2 124M, 12 x 1024, bf16 autocast, the bf16 stream; the two
candidate sets of bench.py's kernels eager variant: Triton for LayerNorm, attention and the loss (the ops' GPU time), and
for the loss alone (per call in a loop). Printed: each timing's two medians and their difference (ms).
With `orders` (call 5): one after the other in both orders, twice each, and in turn three times, to tell an order
effect from the choice's own difference.
Run (on the tree with eager_in_turn.patch applied, which has model._eager_steps_ms; the change was not kept):
    python docs/runs/2026-11-26-issue8-s20/check_protocols.py [orders]
"""
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import torch  # noqa: E402

import model  # noqa: E402
from kernels.choose import time_ms  # noqa: E402

CONFIG = model.GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, bias=False, dropout=0.0)
BY_GPU = dict(layer_norm=True, mlp=False, attention=True, cross_entropy=True)
PER_CALL = dict(layer_norm=False, mlp=False, attention=False, cross_entropy=True)
ARGS = dict(autocast_residual=True)


def one_after_the_other(choice):
    """The check as it was (model.py before this session): build, 3 warm-up and 15 timed steps, free."""
    m = model.GPT(CONFIG, kernels='auto', device_type='cuda', overrides=choice, **ARGS).cuda()
    idx = torch.randint(CONFIG.vocab_size, (12, 1024), device='cuda')

    def step():
        with torch.autocast('cuda', dtype=torch.bfloat16):
            _, loss = m(idx, idx)
        loss.backward()
        m.zero_grad(set_to_none=True)
    try:
        return time_ms(step, reps=15, warmup=3)
    finally:
        del m, step
        torch.cuda.empty_cache()


ORDERS = len(sys.argv) > 1 and sys.argv[1] == 'orders'
names = ['Triton set first', 'loss only first', 'in turn'] if ORDERS else ['one after the other', 'in turn']
diffs = {name: [] for name in names}
for r in range(3 if ORDERS else 4):
    for name in names:
        if name == 'in turn':
            a, b = model._eager_steps_ms(CONFIG, 12, torch.bfloat16, 'cuda', (BY_GPU, PER_CALL), ARGS)
        elif name == 'loss only first':
            b = one_after_the_other(PER_CALL)
            a = one_after_the_other(BY_GPU)
        else:
            a, b = one_after_the_other(BY_GPU), one_after_the_other(PER_CALL)
        diffs[name].append(a - b)
        print(f"{name:20s} round {r}: Triton set {a:7.2f} ms, loss only {b:7.2f} ms, difference {a - b:+6.2f}", flush=True)
for name, d in diffs.items():
    print(f"{name:20s} differences: median {statistics.median(d):+6.2f}, spread {max(d) - min(d):5.2f} ms, "
          f"Triton set faster in {sum(x < 0 for x in d)} of {len(d)}")
