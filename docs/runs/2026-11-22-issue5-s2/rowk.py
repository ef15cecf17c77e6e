# Row kernel variants for the fused linear CE: persistent grids so the second pass over a row
# finds it in L2; eviction hints. One 2048-row chunk of bf16 logits (V = 50304) in HBM.
import sys, os, statistics
sys.path.insert(0, os.getcwd())
import torch, triton, triton.language as tl
V, C = 50304, 2048

@triton.jit
def _rows(LOGITS, TARGETS, LOSS, V, stride_row, n_rows, BLOCK_V: tl.constexpr, EVICT1: tl.constexpr,
          EVICT2: tl.constexpr, PASS2: tl.constexpr):
    cols = tl.arange(0, BLOCK_V)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        row64 = row.to(tl.int64)
        target = tl.load(TARGETS + row64).to(tl.int64)
        base = LOGITS + row64 * stride_row
        m = tl.full([BLOCK_V], float("-inf"), tl.float32)
        total = tl.zeros([BLOCK_V], tl.float32)
        zt = tl.zeros([BLOCK_V], tl.float32)
        for start in tl.range(0, V, BLOCK_V):
            in_row = start + cols < V
            z = tl.load(base + start + cols, mask=in_row, other=float("-inf"), eviction_policy=EVICT1).to(tl.float32)
            m_new = tl.maximum(m, z)
            total = tl.where(m_new == float("-inf"), 0.0, total * tl.exp(m - m_new) + tl.exp(z - m_new))
            m = m_new
            zt += tl.where(start + cols == target, z, 0.0)
        m_row = tl.max(m, 0)
        lse = m_row + tl.log(tl.sum(total * tl.exp(m - m_row), 0))
        tl.store(LOSS + row64, lse - tl.sum(zt, 0))
        if PASS2:
            for start in tl.range(0, V, BLOCK_V):
                in_row = start + cols < V
                z = tl.load(base + start + cols, mask=in_row, other=0.0, eviction_policy=EVICT2).to(tl.float32)
                g = tl.exp(z - lse) - tl.where(start + cols == target, 1.0, 0.0)
                tl.store(base + start + cols, g.to(LOGITS.dtype.element_ty), mask=in_row)

@triton.jit
def _copy(SRC, DST, n, BLOCK: tl.constexpr):
    for start in tl.range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start.to(tl.int64) + tl.arange(0, BLOCK)
        tl.store(DST + offs, tl.load(SRC + offs, mask=offs < n), mask=offs < n)

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
bufs = [torch.randn(C, V, device='cuda').to(torch.bfloat16) for _ in range(3)]  # rotate: no L2 carry-over
t = torch.randint(0, V, (C,), device='cuda'); loss = torch.empty(C, device='cuda')
nb = C * V * 2
it = iter(range(10**9))
ms = graph_ms(lambda: _copy[(132 * 4,)](bufs[next(it) % 3], bufs[(next(it) + 1) % 3], C * V, BLOCK=4096, num_warps=8))
print(f"copy 1R+1W: {ms * 1e3:.0f} us, {2 * nb / ms / 1e6:.0f} GB/s; scaled to 12288 rows {ms * 6:.3f} ms")
sms = torch.cuda.get_device_properties(0).multi_processor_count
for blk, wp in ((4096, 8), (8192, 16), (2048, 4), (8192, 8)):
    for progs in (C, sms, 2 * sms, 3 * sms, 4 * sms):
        for e1, e2 in (("", ""), ("evict_last", "evict_first")):
            for p2 in (True, False):
                if not p2 and (e1 or progs not in (C, 2 * sms)): continue
                it = iter(range(10**9))
                ms = graph_ms(lambda: _rows[(progs,)](bufs[next(it) % 3], t, loss, V, V, C, BLOCK_V=blk, EVICT1=e1, EVICT2=e2, PASS2=p2, num_warps=wp))
                moved = (3 if p2 else 1) * nb
                print(f"block {blk:5d} warps {wp:2d} progs {progs:5d} evict {e1 or '-':10s} pass2 {p2:d}: {ms * 1e3:6.0f} us = "
                      f"{ms * 6:.3f} ms per 12288 rows, {(2 if p2 else 1) * nb / ms / 1e6:.0f} GB/s if 1R+1W", flush=True)
