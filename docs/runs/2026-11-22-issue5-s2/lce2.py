# Chunk layout experiments for the fused linear CE (issue 5, session 2): one preallocated chunk
# buffer; logits + row kernel in L2-sized sub-chunks; per-GEMM times alone; profiler per kernel.
import sys, os, statistics, importlib
sys.path.insert(0, os.getcwd())
import torch
L = importlib.import_module("kernels.linear_cross_entropy")
N, H, V = 12288, 768, 50304
bf = torch.bfloat16
torch.manual_seed(0)
x = torch.randn(N, H, device='cuda', dtype=bf)
w = (torch.randn(V, H, device='cuda') * H ** -0.5).to(bf)
t = torch.randint(0, V, (N,), device='cuda')

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

def eager_ms(fn):
    for _ in range(3): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)

def peak(fn):
    torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); before = torch.cuda.memory_allocated()
    fn(); torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - before) / 2**20

def row_kernel(g, tt, lr, block_v, warps):
    L._linear_cross_entropy_fwd_kernel[(g.shape[0],)](g, tt, lr, V, g.stride(0), -1, 1.0, 0.0, SOFTCAP=False,
        LIBDEVICE=True, PRECISE=False, BLOCK_V=block_v, num_warps=warps)

def fused(chunk, sub, block_v=4096, warps=8, dw_mode='addmm'):
    dx = torch.empty_like(x); dW = torch.zeros(V, H, device='cuda', dtype=torch.float32)
    lr = torch.empty(N, device='cuda'); buf = torch.empty(chunk, V, device='cuda', dtype=bf)
    for s in range(0, N, chunk):
        xc = x[s:s + chunk]; C = xc.shape[0]; g = buf[:C]
        for u in range(0, C, sub):
            gs = g[u:u + sub]
            torch.mm(xc[u:u + sub], w.T, out=gs)
            row_kernel(gs, t[s + u:s + u + gs.shape[0]], lr[s + u:s + u + gs.shape[0]], block_v, warps)
        torch.mm(g, w, out=dx[s:s + C])
        torch.addmm(dW, g.T, xc, out_dtype=torch.float32, out=dW)
    return lr.sum(dtype=torch.float64), dx, dW.to(bf)

print(torch.cuda.get_device_name())
# the GEMMs alone, whole batch (the three-GEMM floor on this device)
G = torch.empty(N, V, device='cuda', dtype=bf)
dWf = torch.zeros(V, H, device='cuda', dtype=torch.float32)
flop = 2 * N * H * V
for name, fn in [('logits x W^T', lambda: torch.mm(x, w.T, out=G)), ('dx = G W', lambda: torch.mm(G, w)),
                 ('dW = G^T x bf16', lambda: torch.mm(G.T, x)),
                 ('dW += G^T x fp32', lambda: torch.addmm(dWf, G.T, x, out_dtype=torch.float32, out=dWf))]:
    ms = graph_ms(fn); print(f"whole {name:18s} {ms:.3f} ms {flop / ms / 1e9:.0f} TFLOP/s", flush=True)
for C in (1328, 2048):
    g = G[:C]; xc = x[:C]
    for name, fn in [('dx', lambda: torch.mm(g, w)), ('dW+= fp32', lambda: torch.addmm(dWf, g.T, xc, out_dtype=torch.float32, out=dWf)),
                     ('logits', lambda: torch.mm(xc, w.T, out=g))]:
        ms = graph_ms(fn); print(f"chunk {C} {name:10s} {ms * N / C:.3f} ms scaled to N, {flop * C / N / ms / 1e9:.0f} TFLOP/s", flush=True)
    for blk, wp in ((4096, 8), (2048, 4), (8192, 16)):
        ms = graph_ms(lambda: row_kernel(g, t[:C], torch.empty(C, device='cuda'), blk, wp))
        print(f"chunk {C} row kernel {blk}/{wp} (HBM) {ms * N / C:.3f} ms scaled, {3 * C * V * 2 / ms / 1e9:.0f} GB/s of 2R+1W", flush=True)
for S in (128, 256, 512):
    g = G[:S]
    ms = graph_ms(lambda: (torch.mm(x[:S], w.T, out=g), row_kernel(g, t[:S], torch.empty(S, device='cuda'), 4096, 8)), calls=20)
    ms2 = graph_ms(lambda: torch.mm(x[:S], w.T, out=g), calls=20)
    print(f"sub {S}: logits+row {ms * N / S:.3f} ms scaled, logits alone {ms2 * N / S:.3f}", flush=True)
del G
ref = L.linear_cross_entropy_fwd(x, w, t, -1, None, 0.0)
for chunk in (1328, 1832, 2048, 2664):
    for sub in (chunk, 512, 256, 128):
        if sub > chunk: continue
        fn = lambda: fused(chunk, sub)
        out = fn()
        err = (out[0] - ref[0]).abs().item()
        print(f"chunk {chunk} sub {sub}: graph {graph_ms(fn, 1):.3f} ms, eager {eager_ms(fn):.3f} ms, peak {peak(fn):.0f} MiB, |dloss| {err:.2e}", flush=True)
xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
def cur():
    xr.grad = wr.grad = None
    L.linear_cross_entropy(xr, wr, t, backend='triton').backward()
print(f"current: eager {eager_ms(cur):.3f} ms, peak {peak(cur):.0f} MiB")
for chunk, sub in ((2048, 256), (2048, 2048)):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5): fused(chunk, sub)
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name[:70]] = per.get(e.name[:70], 0.0) + e.time_range.elapsed_us() / 5 / 1e3
    print(f"profile chunk {chunk} sub {sub}")
    for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {v:7.3f} ms  {k}")
