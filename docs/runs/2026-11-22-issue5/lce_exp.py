# Fused linear CE on the GPU: chunk size and warps, per-kernel times (profiler), peak memory.
import sys, os, statistics, importlib
sys.path.insert(0, os.getcwd())
import torch
import kernels
L = importlib.import_module("kernels.linear_cross_entropy")
N, H, V = 12288, 768, 50304
torch.manual_seed(0)
x = torch.randn(N, H, device='cuda', dtype=torch.bfloat16, requires_grad=True)
w = (torch.randn(V, H, device='cuda') * H ** -0.5).bfloat16().requires_grad_()
t = torch.randint(0, V, (N,), device='cuda')

def step():
    x.grad = w.grad = None
    kernels.linear_cross_entropy(x, w, t, backend='triton').backward()

def med_ms(fn, n=10):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)

def measure(mib, block, warps):
    L.CHUNK_BYTES, L.BLOCK_V, L.NUM_WARPS = mib * 2**20, block, warps
    ms = med_ms(step)
    torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); before = torch.cuda.memory_allocated()
    step(); torch.cuda.synchronize()
    print(f"chunk {mib:4d} MiB ({L._chunk_rows(V, 2)} rows) BLOCK_V {block:5d} warps {warps:2d}: {ms:.3f} ms, "
          f"peak +{(torch.cuda.max_memory_allocated() - before) / 2**20:.0f} MiB", flush=True)
    return ms
best = min(((measure(128, blk, wp), blk, wp) for blk in (2048, 4096, 8192) for wp in (4, 8, 16)))
for mib in (64, 256, 512):
    measure(mib, best[1], best[2])
L.CHUNK_BYTES, L.BLOCK_V, L.NUM_WARPS = 128 * 2**20, best[1], best[2]
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(5): step()
    torch.cuda.synchronize()
per = {}
for e in prof.events():
    if e.device_type == torch.autograd.DeviceType.CUDA:
        per[e.name[:60]] = per.get(e.name[:60], 0.0) + e.time_range.elapsed_us() / 5 / 1e3
for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:10]:
    print(f"  {v:7.3f} ms  {k}")
