# Fused linear CE after the row-kernel rewrite: tile/warps sweep of the whole op (fwd+bwd, CUDA graph),
# the row kernel alone, peak memory, profiler per kernel.
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
    gx, gw = torch.autograd.grad(kernels.linear_cross_entropy(x, w, t, backend='triton'), [x, w])

def graph_ms(fn, calls=3):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls): fn()
    ts = []
    for _ in range(15):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) / calls)
    return statistics.median(ts)

G = torch.randn(2048, V, device='cuda').bfloat16()
lr = torch.empty(2048, device='cuda')
print(torch.cuda.get_device_name())
for blk, wp in ((8192, 16), (8192, 32), (16384, 32), (4096, 32), (2048, 16)):
    L.BLOCK_V, L.NUM_WARPS = blk, wp
    row = graph_ms(lambda: L._linear_cross_entropy_fwd_kernel[(2048,)](G, t, lr, V, V, -1, 1.0, 0.0, SOFTCAP=False,
                   LIBDEVICE=True, PRECISE=False, BLOCK_V=blk, num_warps=wp))
    print(f"BLOCK_V {blk:5d} warps {wp:2d}: row kernel {row * 6:.3f} ms per 12288 rows ({3 * G.numel() * 2 / row / 1e6:.0f} GB/s 2R+1W), "
          f"op fwd+bwd {graph_ms(step, 1):.3f} ms", flush=True)
L.BLOCK_V, L.NUM_WARPS = 8192, 16
torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); before = torch.cuda.memory_allocated()
step(); torch.cuda.synchronize()
print(f"peak +{(torch.cuda.max_memory_allocated() - before) / 2**20:.0f} MiB over fwd+bwd (grads returned)")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(5): step()
    torch.cuda.synchronize()
per = {}
for e in prof.events():
    if e.device_type == torch.autograd.DeviceType.CUDA:
        per[e.name[:70]] = per.get(e.name[:70], 0.0) + e.time_range.elapsed_us() / 5 / 1e3
print(f"profile, sum {sum(per.values()):.3f} ms")
for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:10]:
    print(f"  {v:7.3f} ms  {k}")
