# Tile settings of the Newton-Schulz gram kernel and of the Muon update kernels, on GPT-2 124M's stacks.
import sys, itertools, importlib, torch
sys.path.insert(0, '.')
import kernels
NS = importlib.import_module('kernels.newton_schulz'); MU = importlib.import_module('kernels.muon_update')
def ms(fn, n=20):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(n):
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[n // 2]
stacks = [torch.randn(24, 768, 3072, device='cuda'), torch.randn(12, 768, 2304, device='cuda'), torch.randn(12, 768, 768, device='cuda')]
for bm, bk, w, st in itertools.product([64, 128], [32, 64, 128], [4, 8], [3, 4, 5]):
    NS.BLOCK_M, NS.BLOCK_K, NS.NUM_WARPS, NS.NUM_STAGES = bm, bk, w, st
    try:
        t = [ms(lambda: kernels.newton_schulz(s, backend='triton')) for s in stacks]
        print(f"gram BLOCK_M={bm} BLOCK_K={bk} warps={w} stages={st}: " + " ".join(f"{x:.3f}" for x in t) + f" sum {sum(t):.3f} ms", flush=True)
    except Exception as ex:
        print(f"gram {bm} {bk} {w} {st}: {type(ex).__name__} {str(ex)[:80]}")
shapes = [[(768, 3072), (3072, 768)] * 12, [(2304, 768)] * 12, [(768, 768)] * 12]
grads = [[torch.randn(s, device='cuda') for s in c] for c in shapes]
bufs = [[torch.randn(s, device='cuda') for s in c] for c in shapes]
Os = [torch.randn(len(c), *sorted(c[0]), device='cuda').bfloat16() for c in shapes]
for blk, w in itertools.product([32, 64, 128], [4, 8, 16]):
    MU.BLOCK, MU.NUM_WARPS = blk, w
    a = ms(lambda: [kernels.muon_momentum(g, b, 0.95, True, backend='triton') for g, b in zip(grads, bufs)])
    c = ms(lambda: [kernels.muon_apply(p, o, 0.02, 0.0, backend='triton') for p, o in zip(bufs, Os)])
    print(f"update BLOCK={blk} warps={w}: momentum {a:.3f} ms ({85e6 * 14 / a / 1e9:.0f} GB/s), apply {c:.3f} ms ({85e6 * 10 / c / 1e9:.0f} GB/s)", flush=True)
MU.BLOCK, MU.NUM_WARPS = 64, 8
a = ms(lambda: [kernels.muon_momentum(g, b, 0.95, True, backend='torch') for g, b in zip(grads, bufs)])
c = ms(lambda: [kernels.muon_apply(p, o, 0.02, 0.0, backend='torch') for p, o in zip(bufs, Os)])
print(f"update torch: momentum {a:.3f} ms, apply {c:.3f} ms")
