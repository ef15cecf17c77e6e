# Tile settings of the Newton-Schulz gram kernel per product, as GPU time of CUDA graphs (no launch gaps):
# X X^T of the (24, 768, 3072) and (12, 768, 2304) stacks, and the 768 x 768 products (a I + b A + c A A).
import sys, itertools, importlib, torch
sys.path.insert(0, '.')
NS = importlib.import_module('kernels.newton_schulz')
def graph_us(fn, calls=10):
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
        a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1e3 / calls)
    return sorted(ts)[7]
X1 = torch.randn(24, 768, 3072, device='cuda').bfloat16() / 100
X2 = torch.randn(12, 768, 2304, device='cuda').bfloat16() / 100
A = NS.newton_schulz_gram(X1)
a, b, c = NS.COEFFICIENTS
for bm, bk, w, st in itertools.product([64, 128], [32, 64, 128], [4, 8], [2, 3, 4]):
    NS.BLOCK_M, NS.BLOCK_K, NS.NUM_WARPS, NS.NUM_STAGES = bm, bk, w, st
    try:
        t = [graph_us(lambda: NS.newton_schulz_gram(X1)), graph_us(lambda: NS.newton_schulz_gram(X2)),
             graph_us(lambda: NS.newton_schulz_gram(A, c, A, b, a)), graph_us(lambda: NS.newton_schulz_gram(A[:12], c, A[:12], b, a))]
        print(f"BLOCK_M={bm} BLOCK_K={bk} warps={w} stages={st}: XXt 24x768x3072 {t[0]:.1f} us, 12x768x2304 {t[1]:.1f}, poly 24x768 {t[2]:.1f}, 12x768 {t[3]:.1f}", flush=True)
    except Exception as ex:
        print(f"{bm} {bk} {w} {st}: {type(ex).__name__}")
