"""
Why 'auto''s eager check and bench.py's eager step disagree (issue 8, nineteenth session). In the
seventeenth session's call 7 the check timed the chosen set's forward + backward at 35.49 ms, and
bench.py then timed its whole step at 42.97 ms, against 36.71 for the eager baseline's whole step.
One process, three models (GPT-2 124M, bf16 autocast, 12 x 1024), rounds interleaved:
- chosen: bench.py's kernels variant with Triton for LayerNorm, attention and the loss;
- ours, PyTorch ops: the same model with every op PyTorch's (what an all-PyTorch candidate would be);
- baseline: bench.py's baseline (nanoGPT's recipe).
For each, ms per step timed four ways:
- check: forward + backward + zero_grad, 15 reps after 3 (model.eager_step_choice's protocol);
- step: forward + backward + AdamW + zero_grad on a new batch, 30 after 10 (bench.py's protocol);
- step, gc off: the same with Python's cyclic garbage collector disabled;
- host: the step at 1 x 128 tokens, where the GPU waits for the host: the host's own time.
Then cProfile of the chosen step at 1 x 128 (20 steps), the top functions by own time.
Run: python docs/runs/2026-11-26-issue8-s19/eager_gap.py [rounds]
"""
import cProfile
import gc
import io
import os
import pstats
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import torch  # noqa: E402

from model import GPTConfig, GPT, cublas_without_workspace  # noqa: E402
from kernels.choose import time_ms  # noqa: E402

CONFIG = GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, bias=False, dropout=0.0)
CHOSEN = dict(layer_norm=True, mlp=False, attention=True, cross_entropy=True)
TORCH_SET = dict(layer_norm=False, mlp=False, attention=False, cross_entropy=False)


def build(name):
    torch.manual_seed(1337)
    if name == 'baseline':
        return GPT(CONFIG, kernels='torch', device_type='cuda', cast_per_block=False,
                   scatter_embedding_grad=False).cuda()
    return GPT(CONFIG, kernels='auto', device_type='cuda', overrides=CHOSEN if name == 'chosen' else TORCH_SET,
               autocast_residual=True).cuda()


def steps(model, B, T):
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
    data = torch.randint(CONFIG.vocab_size, (8, 2, B, T), device='cuda')
    X, Y = torch.empty_like(data[0, 0]), torch.empty_like(data[0, 1])
    count = [0]

    def forward_backward():  # as model._eager_step_ms
        with torch.autocast('cuda', dtype=torch.bfloat16):
            _, loss = model(data[0, 0], data[0, 0])
        loss.backward()
        model.zero_grad(set_to_none=True)

    def step():  # as bench.py's stepper, without a graph
        X.copy_(data[count[0] % 8, 0])
        Y.copy_(data[count[0] % 8, 1])
        count[0] += 1
        with torch.autocast('cuda', dtype=torch.bfloat16):
            _, loss = model(X, Y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return forward_backward, step


def gc_off(fn):
    def run():
        gc.disable()
        try:
            fn()
        finally:
            gc.enable()
    return run


def main(rounds):
    cublas_without_workspace()  # as bench.py's training-step parts
    names = ['chosen', 'ours, PyTorch ops', 'baseline']
    results = {}
    print(f"{'model':20s} {'check':>8s} {'step':>8s} {'gc off':>8s} {'host':>8s}   (ms; host: the step at 1 x 128)")
    for r in range(rounds):
        for name in names:
            model = build(name)
            forward_backward, step = steps(model, 12, 1024)
            row = [time_ms(forward_backward, reps=15, warmup=3), time_ms(step, reps=30, warmup=10)]
            row.append(time_ms(gc_off(step), reps=30, warmup=10))
            _, small = steps(model, 1, 128)
            row.append(time_ms(small, reps=30, warmup=10))
            results.setdefault(name, []).append(row)
            print(f"{name:20s} " + " ".join(f"{v:8.2f}" for v in row) + f"   round {r}", flush=True)
            del model, forward_backward, step, small
            gc.collect()
            torch.cuda.empty_cache()
    print("\nmedians over rounds")
    for name, rows in results.items():
        print(f"{name:20s} " + " ".join(f"{statistics.median(col):8.2f}" for col in zip(*rows)))

    model = build('chosen')
    _, small = steps(model, 1, 128)
    for _ in range(10):
        small()
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(20):
        small()
    torch.cuda.synchronize()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats('tottime').print_stats(35)
    print("\ncProfile, 20 chosen steps at 1 x 128, by own time")
    print(out.getvalue())


if __name__ == '__main__':
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
