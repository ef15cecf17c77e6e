"""Why did test_step_graph's GPT test fail after this session's change (call 2: weights 7-14% apart, graphed
against plain)? The same training as the test, per parameter, with the sparse embedding gradient off and on."""
import sys, os
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.path.join(os.getcwd(), 'tests'))
import torch
from test_step_graph import train
from model import GPT, GPTConfig

cfg = GPTConfig(n_layer=2, n_head=2, n_embd=64, block_size=64, vocab_size=96, dropout=0.0)
names = [n for n, _ in GPT(cfg, kernels='torch').named_parameters()]
for kernels in ('torch', 'triton'):
    for sparse in (False, True):
        make = lambda: GPT(cfg, kernels=kernels, sparse_embedding_grad=sparse)
        plain, graphed = train(make, False), train(make, True)
        worst = sorted(((((a - b).norm() / a.norm()).item(), n) for n, a, b in zip(names, plain[1], graphed[1])), reverse=True)[:3]
        print(kernels, 'sparse' if sparse else 'dense', 'losses', [round(a - b, 5) for a, b in zip(plain[0], graphed[0])], 'worst', worst, flush=True)
