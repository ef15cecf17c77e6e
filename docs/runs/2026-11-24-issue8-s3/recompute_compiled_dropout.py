"""Does recompute keep dropout's masks under torch.compile? A compiled GPT (PyTorch's ops,
dropout 0.1, fp32) with recompute 'none', 'mlp', 'block', the same seed before each forward:
if the recomputation drew new masks, the gradients would differ by O(1), not by rounding.
With the argument `fallback_random`, Inductor draws as eager PyTorch does (op by op), so the
forward's masks cannot differ between the three graphs only because Inductor ordered its random
kernels differently (call 4, without it: 'block' drew other masks already in the forward)."""
import os
import sys

import torch
import torch._inductor.config

sys.path.insert(0, os.getcwd())
torch._inductor.config.fallback_random = 'fallback_random' in sys.argv[1:]
from model import GPT, GPTConfig

cfg = GPTConfig(n_layer=2, n_head=4, n_embd=128, block_size=64, vocab_size=256, dropout=0.1)
idx = torch.randint(256, (4, 64), device='cuda', generator=torch.Generator('cuda').manual_seed(0))
runs = {}
for mode in ('none', 'mlp', 'block'):
    torch.manual_seed(0)
    model = GPT(cfg, kernels='torch', device_type='cuda', recompute=mode).cuda()
    step = torch.compile(model)
    for _ in range(2):  # the second call is the compiled one measured (the first compiles)
        model.zero_grad(set_to_none=True)
        torch.manual_seed(1)
        _, loss = step(idx, idx)
        loss.backward()
    runs[mode] = loss.item(), [p.grad.clone() for p in model.parameters()]
for mode in ('mlp', 'block'):
    rel = max(((a - b).norm() / b.norm()).item() for a, b in zip(runs[mode][1], runs['none'][1]))
    print(f"compiled, dropout 0.1, recompute={mode}: loss {runs[mode][0]:.6f} vs {runs['none'][0]:.6f}, "
          f"largest relative gradient difference {rel:.2e}")
