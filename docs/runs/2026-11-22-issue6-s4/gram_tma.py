# Issue 6, session 4: the Newton-Schulz gram kernel with TMA loads (host tensor descriptors,
# 3-D blocks [1, BLOCK_M, BLOCK_K], so a tile never crosses into the next matrix), against
# kernels/newton_schulz.py's pointer loads, same tiles; CUDA graphs of 10 calls, median us.
# The products of a GPT-2 Muon step: X X^T of the wide stacks, and the 768 x 768 ones
# (a I + b A + c A A, and A B^T of two commuting ones). Call 4 also timed a fused last product +
# weight update against bmm + muon_apply (gram_tma_call4.txt); call 5 has the gram kernel's
# vectorized stores back (call 4's triangle masks made them scalar) and leaves that part out.
import sys, os, importlib
sys.path.insert(0, os.getcwd())
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor
NS = importlib.import_module('kernels.newton_schulz')

@triton.jit
def gram_tma(XD, YD, C, OUT, M, K, alpha, beta, gamma, stride_cb, stride_cm, stride_ob, stride_om,
             HAS_C: tl.constexpr, MIRROR_DIAGONAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
             NUM_STAGES: tl.constexpr):
    ti, tj = tl.program_id(0), tl.program_id(1)
    if ti >= tj:
        b = tl.program_id(2)
        rows_i = ti * BLOCK_M + tl.arange(0, BLOCK_M)
        rows_j = tj * BLOCK_M + tl.arange(0, BLOCK_M)
        acc = tl.zeros([BLOCK_M, BLOCK_M], tl.float32)
        for k in tl.range(0, K, BLOCK_K, num_stages=NUM_STAGES):
            xi = XD.load([b, ti * BLOCK_M, k]).reshape(BLOCK_M, BLOCK_K)
            yj = YD.load([b, tj * BLOCK_M, k]).reshape(BLOCK_M, BLOCK_K)
            acc = tl.dot(xi, tl.trans(yj), acc)
        acc *= alpha
        b = b.to(tl.int64)
        mask = (rows_i < M)[:, None] & (rows_j < M)[None, :]
        if HAS_C:
            acc += beta * tl.load(C + b * stride_cb + rows_i[:, None] * stride_cm + rows_j[None, :],
                                  mask=mask, other=0.0).to(tl.float32)
        acc += tl.where(rows_i[:, None] == rows_j[None, :], gamma, 0.0)
        out = acc.to(OUT.dtype.element_ty)
        if MIRROR_DIAGONAL and ti == tj:
            out = tl.where(rows_i[:, None] >= rows_j[None, :], out, tl.trans(out))
        OUT += b * stride_ob
        tl.store(OUT + rows_i[:, None] * stride_om + rows_j[None, :], out, mask=mask)
        if ti != tj:
            tl.store(OUT + rows_j[:, None] * stride_om + rows_i[None, :], tl.trans(out),
                     mask=(rows_j < M)[:, None] & (rows_i < M)[None, :])

def gram_tma_call(X, alpha=1.0, C=None, beta=0.0, gamma=0.0, Y=None, bm=128, bk=64, warps=4, stages=3):
    mirror = Y is not None and Y is not X
    Y = X if Y is None else Y
    B, M, K = X.shape
    out = torch.empty(B, M, M, device=X.device, dtype=X.dtype)
    xd = TensorDescriptor(X, list(X.shape), list(X.stride()), [1, bm, bk])
    yd = TensorDescriptor(Y, list(Y.shape), list(Y.stride()), [1, bm, bk])
    Cs = out if C is None else C
    t = triton.cdiv(M, bm)
    gram_tma[(t, t, B)](xd, yd, Cs, out, M, K, alpha, beta, gamma, Cs.stride(0), Cs.stride(1), out.stride(0), out.stride(1),
                        HAS_C=C is not None, MIRROR_DIAGONAL=mirror, BLOCK_M=bm, BLOCK_K=bk, NUM_STAGES=stages, num_warps=warps)
    return out

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

torch.manual_seed(0)
X1 = torch.randn(24, 768, 3072, device='cuda').bfloat16() / 60
X2 = torch.randn(12, 768, 2304, device='cuda').bfloat16() / 50
A = NS.newton_schulz_gram(X1)
P = NS.newton_schulz_gram(A, 2.0, A, -4.7, 3.4)
a, b, c = NS.COEFFICIENTS
cases = {'XXt 24x768x3072': (X1, {}), 'XXt 12x768x2304': (X2, {}), 'poly 24x768': (A, dict(alpha=c, C=A, beta=b, gamma=a)),
         'poly 12x768': (A[:12].contiguous(), dict(alpha=c, C=A[:12].contiguous(), beta=b, gamma=a)), 'A P^T 24x768': (A, dict(Y=P))}
print(torch.cuda.get_device_name(), flush=True)
for name, (X, kw) in cases.items():
    ref = NS.newton_schulz_gram(X, **kw)
    base = graph_us(lambda: NS.newton_schulz_gram(X, **kw))
    M, K = X.shape[1], X.shape[2]
    tflop = 2 * X.shape[0] * M * M * K * 21 / 36 / 1e12  # the tiles computed (one triangle of 6 x 6)
    line = [f"{name}: pointer loads {base:.1f} us ({tflop / base * 1e6:.0f} TFLOP/s of tiles computed)"]
    for bm, bk, w, st in [(128, 64, 4, 3), (128, 64, 4, 4), (128, 128, 4, 2), (128, 128, 4, 3), (128, 64, 8, 3), (128, 64, 8, 4)]:
        try:
            got = gram_tma_call(X, bm=bm, bk=bk, warps=w, stages=st, **kw)
            same = torch.equal(got, ref)
            t = graph_us(lambda: gram_tma_call(X, bm=bm, bk=bk, warps=w, stages=st, **kw))
            line.append(f"TMA {bm}/{bk}/{w}w/{st}s {t:.1f}{'' if same else ' (DIFFERS)'}")
        except Exception as e:
            line.append(f"TMA {bm}/{bk}/{w}w/{st}s {type(e).__name__}: {str(e)[:80]}")
    print("; ".join(line), flush=True)

