"""Where compiled recompute loses its savings: GPT-2 124M (Triton kernels, bf16 autocast, 12 x 1024
random tokens), eager and compiled, recompute 'none' and 'block'; the memory allocated above the
weights at the forward's peak (the loss computes its gradients in the forward) and at the
backward's peak, MiB, on the third step (the first two compile and warm up)."""
import os
import sys

import torch

sys.path.insert(0, os.getcwd())
from model import GPT, GPTConfig

cfg = GPTConfig(n_layer=12, n_head=12, n_embd=768, block_size=1024, vocab_size=50304, bias=False, dropout=0.0)
idx = torch.randint(50304, (12, 1024), device='cuda')
MiB = 2 ** 20
for compiled in (False, True):
    for mode in ('none', 'mlp', 'block'):
        torch.manual_seed(0)
        model = GPT(cfg, kernels='triton', device_type='cuda', recompute=mode).cuda()
        step = torch.compile(model) if compiled else model
        for _ in range(3):
            model.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            with torch.autocast('cuda', dtype=torch.bfloat16):
                _, loss = step(idx, idx)
            torch.cuda.synchronize()
            fwd_peak, after_fwd = torch.cuda.max_memory_allocated(), torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            loss.backward()
            torch.cuda.synchronize()
            bwd_peak = torch.cuda.max_memory_allocated()
        print(f"{'compiled' if compiled else 'eager':8s} recompute={mode:5s}: forward peak {(fwd_peak - base) / MiB:7.0f}, "
              f"kept for the backward {(after_fwd - base) / MiB:7.0f}, backward peak {(bwd_peak - base) / MiB:7.0f} MiB",
              flush=True)
        del model, step, loss
        torch._dynamo.reset()
