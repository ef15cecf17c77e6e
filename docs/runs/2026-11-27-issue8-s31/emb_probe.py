"""kernels/embedding.py's two kernels at GPT-2's shape (12 x 1024 tokens, C = 768, V = 50304, the stream in bf16), each
as a CUDA graph of 10 launches, median of 5 replays, for several tiles; and PyTorch's compiled forward and backward of the
same (F.embedding + positions + cast; the scatter into a given gradient by index_add_ and the positions' sum) for scale.
Runs on the tree of the branch issue8-embedding-kernel (kernels/embedding.py is not on main)."""
import importlib
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, '.')
E = importlib.import_module('kernels.embedding')  # the module: kernels.embedding is the function

B, T, C, V = 12, 1024, 768, 50304
dev = 'cuda'
idx = torch.randint(V, (B, T), device=dev)
w = torch.randn(V, C, device=dev)
pos = torch.randn(T, C, device=dev)
dx = torch.randn(B, T, C, device=dev, dtype=torch.bfloat16)
grad = torch.zeros(V, C, device=dev)


def graph_us(fn, reps=10):
    fn()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    times = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / reps)
    return statistics.median(times)


fwd_bytes = B * T * C * (4 + 2) + T * C * 4 + B * T * 8  # rows read fp32, x written bf16, positions, ids
bwd_bytes = B * T * C * (2 + 4 + 4) + T * C * 4 + B * T * 8  # dx read, rows of dW read and written, dP written
for tile in [(8, 256, 4), (4, 256, 4), (16, 256, 4), (2, 256, 4), (8, 256, 8), (4, 128, 4), (1, 256, 2), (32, 256, 8)]:
    E.TILE['fwd'] = tile
    us = graph_us(lambda: E.embedding_fwd(idx, w, pos, torch.bfloat16))
    print(f"fwd tile {tile}: {us:7.1f} us, {fwd_bytes / us / 1e3:6.0f} GB/s", flush=True)
for tile in [(4, 256, 4), (1, 256, 4), (2, 256, 4), (8, 256, 4), (16, 256, 4), (4, 128, 4), (2, 256, 2), (8, 256, 8),
             (16, 128, 4), (32, 256, 8)]:
    E.TILE['bwd'] = tile
    us = graph_us(lambda: E.embedding_bwd_into(dx, idx, grad, True))
    print(f"bwd tile {tile}: {us:7.1f} us, {bwd_bytes / us / 1e3:6.0f} GB/s", flush=True)

fwd_c = torch.compile(lambda i, w, p: (F.embedding(i, w) + p).to(torch.bfloat16))
print(f"compiled PyTorch fwd: {graph_us(lambda: fwd_c(idx, w, pos)):7.1f} us", flush=True)


def bwd_ref(g, i, d):
    g.index_add_(0, i.reshape(-1), d.reshape(-1, C).float())
    return d.float().sum(0)


bwd_c = torch.compile(bwd_ref)
print(f"compiled PyTorch bwd (scatter + positions' sum): {graph_us(lambda: bwd_c(grad, idx, dx)):7.1f} us", flush=True)
