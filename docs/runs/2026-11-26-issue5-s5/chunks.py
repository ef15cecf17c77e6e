"""Issue 5: the fused linear + cross-entropy at GPT-2's head (12288 x 768, V = 50304, bf16), forward +
backward, timed as bench.py times it (a CUDA graph of 10 calls, replayed; median of 10 replays) and its
peak extra memory, for several chunk sizes (kernels.linear_cross_entropy.CHUNK_BYTES), in turn over
rounds, with torch.compile of the reference in each round for scale. The time-memory trade of the
chunking, measured. $ python docs/runs/2026-11-26-issue5-s5/chunks.py [rounds]"""
import os
import sys
sys.path.insert(0, os.getcwd())  # run from the repository root
import importlib
import torch
lce = importlib.import_module('kernels.linear_cross_entropy')  # the module (kernels exports a function of its name)
from kernels.choose import graph_ms
from bench_kernels import peak_mib  # bench.py's measure of an op's peak

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
N, H, V = 12288, 768, 50304
torch.manual_seed(0)
x = (torch.randn(N, H, device='cuda') * 0.5).to(torch.bfloat16).requires_grad_()
w = (torch.randn(V, H, device='cuda') * 0.02).to(torch.bfloat16).requires_grad_()
t = torch.randint(V, (N,), device='cuda')

def run(f):
    loss = f(x, w, t)
    torch.autograd.grad(loss, (x, w))

compiled = torch.compile(lce.linear_cross_entropy_ref)
MiB = 2 ** 20
sizes = [200 * MiB, 240 * MiB, 300 * MiB, 400 * MiB, 600 * MiB, 1200 * MiB]
print(f"{'chunk':>14} {'rows':>6} {'chunks':>6} {'ms':>7} {'peak MiB':>9}")
for r in range(rounds):
    for size in sizes:
        lce.CHUNK_BYTES = size
        rows = lce._chunk_rows(N, V, 2)
        ms = graph_ms(lambda: run(lce.linear_cross_entropy))
        print(f"{size // MiB:>10} MiB {rows:>6} {-(-N // rows):>6} {ms:7.3f} {peak_mib(lambda: run(lce.linear_cross_entropy)):9.0f}", flush=True)
    ms = graph_ms(lambda: run(compiled))
    print(f"{'compile':>14} {'':>6} {'':>6} {ms:7.3f} {peak_mib(lambda: run(compiled)):9.0f}   (round {r})", flush=True)
