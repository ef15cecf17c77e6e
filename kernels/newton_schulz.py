"""
Newton-Schulz orthogonalisation, as Muon uses it: G (M, N) -> about U V^T of G's SVD
U S V^T, in bf16, for a matrix or a stack of same-shape matrices (B, M, N).

    X = G / (||G||_F + 1e-7)            (bf16; a tall G is transposed first, so M <= N)
    repeat `steps` times:  A = X X^T             (M, M), symmetric
                           B = b A + c A A       (M, M), symmetric: A A = A A^T
                           X = a X + B X = (a I + B) X
    with the quintic's coefficients (a, b, c) = (3.4445, -4.7750, 2.0315), and X
    transposed back at the end. The singular values go to about [0.7, 1.2], not exactly 1:
    the coefficients trade precision for speed, as in the published Muon.
No gradient: an optimizer's step.

The two symmetric products are one Triton kernel, OUT = alpha X X^T + beta C + gamma I
(C symmetric): each program makes one tile on or below the diagonal and writes it and,
off the diagonal, its mirror, so half the tiles' work is skipped. With X = A, C = A and
gamma = a it is a I + B (A A^T = A A), so that the last product is a plain batched
matmul (cuBLAS's bmm; its baddbmm, which would add a X, ran at half bmm's speed).
Every matrix of the stack is one grid axis: a stack of 24 small matrices is 3 launches
per step, not 72. Products in fp32, each result rounded to bf16 once. The division by
the norm costs no pass of its own: the first step takes X unnormalised and a scale s per
matrix, computing A = s^2 X X^T and s (a I + b A + c A A), whose product with X is the
normalised X's next iterate.

Constraints: G (M, N) or (B, M, N), fp32, bf16 or fp16; M, N >= 1.
"""
import torch

from kernels.backend import triton, tl, use_triton, INTERPRET

COEFFICIENTS = (3.4445, -4.7750, 2.0315)
EPS = 1e-7

def _iterate(G, steps, dtype, step):
    """What every implementation shares: G in `dtype`, transposed if tall, over its norm;
    `steps` times X = step(X, norm); transposed back. The first step gets X before the
    division and norm = ||X|| + eps per matrix (a kernel can fold the division into its
    products), the others norm = None."""
    tall = G.size(-2) > G.size(-1)
    X = (G.mT if tall else G).to(dtype)
    norm = X.norm(dim=(-2, -1), keepdim=True) + EPS
    if not steps:
        X = X / norm
    for k in range(steps):
        X = step(X, norm if k == 0 else None)
    return X.mT if tall else X

def _step_ref(X, norm):
    a, b, c = COEFFICIENTS
    if norm is not None:
        X = X / norm
    A = X @ X.mT
    B = b * A + c * A @ A
    return a * X + B @ X

@torch.no_grad()
def newton_schulz_ref(G, steps=5, dtype=torch.bfloat16):
    """The published iteration in PyTorch, in `dtype` (bf16 as Muon runs it; the tests'
    reference runs it in fp64)."""
    return _iterate(G, steps, dtype, _step_ref)

@triton.jit
def _newton_schulz_gram_kernel(
    X,    # (B, M, K) bf16: each matrix's rows are the vectors whose dot products make OUT
    C,    # (B, M, M) symmetric, added times beta (read only if HAS_C)
    OUT,  # (B, M, M) out: s^S_POWER (alpha X X^T + beta C + gamma I)
    S,    # (B,) fp32: s, a scale per matrix (read only if S_POWER > 0)
    M, K, alpha, beta, gamma,
    stride_xb, stride_xm, stride_xk, stride_cb, stride_cm, stride_ob, stride_om,
    HAS_C: tl.constexpr, S_POWER: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """Tile (ti, tj) of one matrix of the stack; tiles above the diagonal do nothing:
    their values come as the mirror of (tj, ti)."""
    ti, tj = tl.program_id(0), tl.program_id(1)
    if ti >= tj:
        b = tl.program_id(2).to(tl.int64)
        X += b * stride_xb
        rows_i = ti * BLOCK_M + tl.arange(0, BLOCK_M)
        rows_j = tj * BLOCK_M + tl.arange(0, BLOCK_M)
        ks = tl.arange(0, BLOCK_K)
        acc = tl.zeros([BLOCK_M, BLOCK_M], tl.float32)
        for k in tl.range(0, K, BLOCK_K):
            in_k = (k + ks < K)[None, :]
            xi = tl.load(X + rows_i[:, None] * stride_xm + (k + ks)[None, :] * stride_xk,
                         mask=(rows_i < M)[:, None] & in_k, other=0.0)
            xj = tl.load(X + rows_j[:, None] * stride_xm + (k + ks)[None, :] * stride_xk,
                         mask=(rows_j < M)[:, None] & in_k, other=0.0)
            acc = tl.dot(xi, tl.trans(xj), acc)
        acc *= alpha
        mask = (rows_i < M)[:, None] & (rows_j < M)[None, :]
        if HAS_C:
            acc += beta * tl.load(C + b * stride_cb + rows_i[:, None] * stride_cm + rows_j[None, :],
                                  mask=mask, other=0.0).to(tl.float32)
        acc += tl.where(rows_i[:, None] == rows_j[None, :], gamma, 0.0)
        if S_POWER > 0:
            scale = tl.load(S + b)
            acc *= scale if S_POWER == 1 else scale * scale
        out = acc.to(OUT.dtype.element_ty)
        OUT += b * stride_ob
        tl.store(OUT + rows_i[:, None] * stride_om + rows_j[None, :], out, mask=mask)
        if ti != tj:
            tl.store(OUT + rows_j[:, None] * stride_om + rows_i[None, :], tl.trans(out),
                     mask=(rows_j < M)[:, None] & (rows_i < M)[None, :])

# tiles measured under CUDA graphs on the H100 (docs/runs/2026-11-22-issue6-s2/ns_tune2.py): 4 warps equal 8
# for X X^T and are 18% faster for the 768 x 768 products
BLOCK_M, BLOCK_K, NUM_WARPS, NUM_STAGES = (16, 16, 4, 1) if INTERPRET else (128, 64, 4, 3)

def newton_schulz_gram(X, alpha=1.0, C=None, beta=0.0, gamma=0.0, scale=None, scale_power=1):
    """s^scale_power (alpha X X^T + beta C + gamma I) for X (B, M, K) bf16, C (B, M, M)
    symmetric with unit column stride (or None) and s = scale (B,) fp32 (or None: 1): one
    triangle of tiles computed, mirrored."""
    if X.dim() != 3 or (C is not None and (C.shape != (X.shape[0], X.shape[1], X.shape[1]) or C.stride(-1) != 1)):
        raise ValueError(f"newton_schulz_gram: X {tuple(X.shape)} is not (B, M, K) or C "
                         f"{None if C is None else tuple(C.shape)} is not (B, M, M) with unit column stride")
    B, M, K = X.shape
    out = torch.empty(B, M, M, device=X.device, dtype=X.dtype)
    if scale is not None and (scale.shape != (B,) or scale.dtype != torch.float32):
        raise ValueError(f"newton_schulz_gram: scale {tuple(scale.shape)} {scale.dtype} is not ({B},) fp32")
    Cs = out if C is None else C  # pointers the kernel never reads without HAS_C or S_POWER
    S = out if scale is None else scale.contiguous()
    tiles = triton.cdiv(M, BLOCK_M)
    _newton_schulz_gram_kernel[(tiles, tiles, B)](
        X, Cs, out, S, M, K, alpha, beta, gamma, X.stride(0), X.stride(1), X.stride(2), Cs.stride(0), Cs.stride(1),
        out.stride(0), out.stride(1), HAS_C=C is not None, S_POWER=0 if scale is None else scale_power,
        BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    return out

def _step_triton(X, norm):
    a, b, c = COEFFICIENTS
    X = X.contiguous()  # a tall input's transpose, copied to rows
    s = None if norm is None else 1 / norm.float().flatten()  # X / norm's step, from X
    A = newton_schulz_gram(X, scale=s, scale_power=2)
    return torch.bmm(newton_schulz_gram(A, alpha=c, C=A, beta=b, gamma=a, scale=s), X)  # (a I + b A + c A A) X

@torch.no_grad()
def newton_schulz(G, steps=5, backend="auto"):
    """About U V^T of G = U S V^T (per matrix of a stack), in bf16, by `steps` quintic
    Newton-Schulz steps; by the Triton kernel or PyTorch as `backend` says."""
    limit = None if G.dim() in (2, 3) and G.numel() > 0 else f"shape {tuple(G.shape)} is not (M, N) or (B, M, N)"
    if not use_triton("newton_schulz", backend, G, limit=limit):
        return newton_schulz_ref(G, steps)
    X = _iterate(G if G.dim() == 3 else G[None], steps, torch.bfloat16, _step_triton)
    return X if G.dim() == 3 else X[0]
