"""nanoGPT's own model (karpathy/nanoGPT 3adf61e, in the git-ignored .devdata/nanogpt/, not in this
repository) against our model with PyTorch's ops (bench.py's baseline: kernels='torch', autocast's casts
per use, the fp32 residual stream): GPT-2 124M, 12 x 1024 random tokens, bf16 autocast, fused AdamW, eager.
Per model: the step's median ms (CUDA events, as bench.py) and peak memory over the timed steps (as
bench.py reads it), twice in turn; then, eager, a profile of 3 steps: GPU busy time and kernels per step,
and the kernels by GPU time per step. With `compiled`, both models under torch.compile (nanoGPT's plain
call, as bench.py's compiled baseline) and no profile.
$ python docs/runs/2026-11-26-issue5-s7/eager_baselines.py [compiled]   (from the repository root)"""
import os
import sys
import collections
sys.path.insert(0, os.getcwd())
import torch
from kernels.choose import time_ms
import model as ours
sys.path.insert(0, os.path.join(os.getcwd(), '.devdata', 'nanogpt'))
sys.modules.pop('model')
import model as nanogpt  # nanoGPT's model.py
assert nanogpt.__file__ != ours.__file__

torch.backends.cuda.matmul.allow_tf32 = True
B, T, V = 12, 1024, 50304
torch.manual_seed(1337)
data = torch.randint(V, (2, B, T), device='cuda')
ctx = torch.autocast('cuda', dtype=torch.bfloat16)

def make(which):
    torch.manual_seed(1337)
    if which == 'nanoGPT':
        m = nanogpt.GPT(nanogpt.GPTConfig(block_size=T, vocab_size=V, n_layer=12, n_head=12, n_embd=768, dropout=0.0, bias=False))
        opt = m.to('cuda').configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
    else:
        m = ours.GPT(ours.GPTConfig(block_size=T, vocab_size=V, n_layer=12, n_head=12, n_embd=768, dropout=0.0, bias=False),
                     kernels='torch', device_type='cuda', cast_per_block=False)
        opt = m.to('cuda').configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
    m = torch.compile(m) if sys.argv[1:] == ['compiled'] else m

    def step():
        with ctx:
            _, loss = m(data[0], data[1])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss
    return step

compiled = sys.argv[1:] == ['compiled']
steps = {which: make(which) for which in ('nanoGPT', 'ours (baseline)')}
for r in range(2):
    for which, step in steps.items():
        for _ in range(10):  # warm-up (compilation) before the peak is read
            step()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        ms = time_ms(step, 30, warmup=0)
        print(f"round {r}: {which:>16} {ms:.2f} ms/step, peak {torch.cuda.max_memory_allocated() / 2**20:,.0f} MiB"
              + (" (compiled)" if compiled else ""), flush=True)
if compiled:
    sys.exit()

for which, step in steps.items():
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            step()
        torch.cuda.synchronize()
    spent, count = collections.Counter(), collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            spent[e.name] += e.device_time_total / 3
            count[e.name] += 1 / 3
    print(f"\n{which}: GPU busy {sum(spent.values()) / 1e3:.2f} ms per step, {sum(count.values()):.0f} kernels per step")
    for name, us in spent.most_common(25):
        print(f"  {us:8.1f} us  x{count[name]:4.0f}  {name[:110]}")
