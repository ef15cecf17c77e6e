# (1) row kernel with the next tile's load issued before the current tile's math (software
# prefetch) vs the module's kernel; (2) dW += g^T x in both orientations (fp32 accumulate, K = 2048).
import sys, os, statistics, importlib
sys.path.insert(0, os.getcwd())
import torch, triton, triton.language as tl
L = importlib.import_module("kernels.linear_cross_entropy")
V, C, H = 50304, 2048, 768

@triton.jit
def _rows_prefetch(LOGITS, TARGETS, LOSS, V, stride_row, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    target = tl.load(TARGETS + row).to(tl.int64)
    LOGITS += row * stride_row
    cols = tl.arange(0, BLOCK_V)
    m = tl.full([], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_V], tl.float32)
    nxt = tl.load(LOGITS + cols, mask=cols < V, other=float("-inf"))
    for start in tl.range(0, V, BLOCK_V):
        z = nxt.to(tl.float32)
        nxt = tl.load(LOGITS + start + BLOCK_V + cols, mask=start + BLOCK_V + cols < V, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(z, 0))
        total = total * tl.exp(m - m_new) + tl.exp(z - m_new)
        m = m_new
    lse = m + tl.log(tl.sum(total, 0))
    z_t = tl.load(LOGITS + target).to(tl.float32)
    tl.store(LOSS + row, lse - z_t)
    nxt = tl.load(LOGITS + cols, mask=cols < V, other=0.0)
    for start in tl.range(0, V, BLOCK_V):
        z = nxt.to(tl.float32)
        nxt = tl.load(LOGITS + start + BLOCK_V + cols, mask=start + BLOCK_V + cols < V, other=0.0)
        tl.store(LOGITS + start + cols, tl.exp(z - lse).to(LOGITS.dtype.element_ty), mask=start + cols < V)
    tl.debug_barrier()
    tl.store(LOGITS + target, (tl.exp(z_t - lse) - 1.0).to(LOGITS.dtype.element_ty))

def graph_ms(fn, calls=5):
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

print(torch.cuda.get_device_name())
bufs = [torch.randn(C, V, device='cuda').to(torch.bfloat16) for _ in range(3)]
t = torch.randint(0, V, (C,), device='cuda'); loss = torch.empty(C, device='cuda')
for blk, wp in ((8192, 16), (4096, 8), (8192, 8), (4096, 16), (16384, 16)):
    it = iter(range(10**9))
    a = graph_ms(lambda: L._linear_cross_entropy_fwd_kernel[(C,)](bufs[next(it) % 3], t, loss, V, V, -1, 1.0, 0.0,
                 SOFTCAP=False, LIBDEVICE=True, PRECISE=False, BLOCK_V=blk, num_warps=wp))
    it = iter(range(10**9))
    b = graph_ms(lambda: _rows_prefetch[(C,)](bufs[next(it) % 3], t, loss, V, V, BLOCK_V=blk, num_warps=wp))
    print(f"BLOCK_V {blk:5d} warps {wp:2d}: module kernel {a * 6:.3f} ms, prefetching {b * 6:.3f} ms per 12288 rows", flush=True)
g, x = bufs[0], torch.randn(C, H, device='cuda').bfloat16()
dW = torch.zeros(V, H, device='cuda'); dWt = torch.zeros(H, V, device='cuda')
for name, fn in [('dW (V,H) += g^T x', lambda: torch.addmm(dW, g.T, x, out_dtype=torch.float32, out=dW)),
                 ('dW^T (H,V) += x^T g', lambda: torch.addmm(dWt, x.T, g, out_dtype=torch.float32, out=dWt)),
                 ('dW (V,H) = g^T x, beta 0', lambda: torch.addmm(dW, g.T, x, beta=0, out_dtype=torch.float32, out=dW)),
                 ('dW^T (H,V) = x^T g, beta 0', lambda: torch.addmm(dWt, x.T, g, beta=0, out_dtype=torch.float32, out=dWt))]:
    ms = graph_ms(fn)
    print(f"{name:28s} {ms * 1e3:.0f} us, {2 * C * H * V / ms / 1e9:.0f} TFLOP/s", flush=True)
