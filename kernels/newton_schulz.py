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

The symmetric products are one Triton kernel, OUT = alpha X Y^T + beta C + gamma I
(Y = X, or a Y with X Y^T symmetric; C symmetric): each program makes one tile on or below
the diagonal and writes it and, off the diagonal, its mirror, so half the tiles' work is
skipped. With X = Y = A, C = A and gamma = a it is a I + B (A A^T = A A), so that the last
product is a plain batched matmul (cuBLAS's bmm; its baddbmm, which would add a X, is
slower: docs/perf-notes.md). Every matrix of the stack is one grid axis: a stack of 24 small
matrices is 3 launches per step, not 72. Products in fp32, each result rounded to bf16
once. The division by the norm costs no pass of its own: the first step takes X
unnormalised, computing A = s^2 X X^T and s (a I + b A + c A A) with s = 1 / (||X|| +
eps), whose product with X is the normalised X's next iterate; each program makes s from
sums of X's squares in parts (B, n), which muon_momentum hands over as it makes X (or
one reduction here).

Several steps as one, for wide matrices (N >= 2 M): P = a I + b A + c A A is a
polynomial in A = X X^T, so the next Gram matrix follows from M x M products alone,
    X1 = P0 X0,  A1 = X1 X1^T = P0 A0 P0 = P0^2 A0,  X2 = P1 X1 = (P1 P0) X0,  ...
and all of these are polynomials in A0, symmetric and commuting: one triangle each. A
group of g steps costs one M x M x N Gram product, one M x M x N product, and 4 g - 3
M x M x M products (P_i; P_i^2 and P_i^2 A_i for the next A; P_i times the product of
the P's before it): at N = 4 M, five steps as 3 + 2 are 19 M^3 multiply-adds, as 2 + 2 + 1
23.5, one at a time 32.5 (a triangle counted as half its square). Every group starts
again from X itself (its own Gram matrix): iterated in bf16 on the Gram matrices alone,
errors grow on spread spectra. In bf16 against the float64 iteration (max error, four
kinds of spectra at 768 x 3072 and 768 x 2304), 3 + 2 stays near the one-step
iteration's error and below PyTorch's own bf16 iteration's; 2 + 3 does not on spread
spectra, nor all five as one (up to divergence): docs/perf-notes.md.

Constraints: G (M, N) or (B, M, N), fp32, bf16 or fp16; M, N >= 1.
"""
import math

import torch

from kernels.backend import triton, tl, use_triton, cdiv, INTERPRET

COEFFICIENTS = (3.4445, -4.7750, 2.0315)
EPS = 1e-7

def _normalised(X):
    return X / (X.norm(dim=(-2, -1), keepdim=True) + EPS)

def _iterate(G, steps, dtype, advance):
    """What every implementation shares: G in `dtype`, transposed if tall, as one stack
    (B, M, N) of its matrices; X, done = advance(X, first, steps left) until `steps` are
    done (advance may take more than one at a time); transposed back, in G's shape. The
    first call (first=True) gets X before its division by the norm (a kernel can fold the
    division into its products)."""
    tall = G.size(-2) > G.size(-1)
    X = (G.mT if tall else G).to(dtype)
    X = X.reshape(math.prod(X.shape[:-2]), *X.shape[-2:])
    if not steps:
        X = _normalised(X)
    done = 0
    while done < steps:
        X, n = advance(X, done == 0, steps - done)
        done += n
    return (X.mT if tall else X).reshape(G.shape)

def _step_ref(X, first, left):
    """One step of a stack X (B, M, N) as torch.optim.Muon takes it: each product and its sum rounded once."""
    a, b, c = COEFFICIENTS
    if first:
        X = _normalised(X)
    A = X @ X.mT
    B = torch.baddbmm(A, A, A, beta=b, alpha=c)
    return torch.baddbmm(X, B, X, beta=a), 1

@torch.no_grad()
def newton_schulz_ref(G, steps=5, dtype=torch.bfloat16):
    """The published iteration in PyTorch, in `dtype` (bf16 as Muon runs it; the tests'
    reference runs it in fp64)."""
    return _iterate(G, steps, dtype, _step_ref)

@triton.jit
def _newton_schulz_gram_kernel(
    X,    # (B, M, K) bf16: OUT's rows are dot products of X's rows
    Y,    # (B, M, K) bf16: with Y's rows (X itself for X X^T); X Y^T must be symmetric
    C,    # (B, M, M) symmetric, added times beta (read only if HAS_C)
    OUT,  # (B, M, M) out: s^S_POWER (alpha X Y^T + beta C + gamma I)
    SUMSQ,  # (B, n_parts) fp32, contiguous: ||X_0||^2 in parts, s = 1 / (||X_0|| + eps) (read only if S_POWER > 0)
    M, K, alpha, beta, gamma, n_parts, eps,
    stride_xb, stride_xm, stride_xk, stride_yb, stride_ym, stride_yk, stride_cb, stride_cm, stride_ob, stride_om,
    HAS_C: tl.constexpr, S_POWER: tl.constexpr, MIRROR_DIAGONAL: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_K: tl.constexpr, PARTS_BLOCK: tl.constexpr,
):
    """Tile (ti, tj) of one matrix of the stack; tiles above the diagonal do nothing:
    their values come as the mirror of (tj, ti)."""
    ti, tj = tl.program_id(0), tl.program_id(1)
    if ti >= tj:
        b = tl.program_id(2).to(tl.int64)
        X += b * stride_xb
        Y += b * stride_yb
        rows_i = ti * BLOCK_M + tl.arange(0, BLOCK_M)
        rows_j = tj * BLOCK_M + tl.arange(0, BLOCK_M)
        ks = tl.arange(0, BLOCK_K)
        acc = tl.zeros([BLOCK_M, BLOCK_M], tl.float32)
        for k in tl.range(0, K, BLOCK_K):
            in_k = (k + ks < K)[None, :]
            xi = tl.load(X + rows_i[:, None] * stride_xm + (k + ks)[None, :] * stride_xk,
                         mask=(rows_i < M)[:, None] & in_k, other=0.0)
            yj = tl.load(Y + rows_j[:, None] * stride_ym + (k + ks)[None, :] * stride_yk,
                         mask=(rows_j < M)[:, None] & in_k, other=0.0)
            acc = tl.dot(xi, tl.trans(yj), acc)
        acc *= alpha
        mask = (rows_i < M)[:, None] & (rows_j < M)[None, :]
        if HAS_C:
            acc += beta * tl.load(C + b * stride_cb + rows_i[:, None] * stride_cm + rows_j[None, :],
                                  mask=mask, other=0.0).to(tl.float32)
        acc += tl.where(rows_i[:, None] == rows_j[None, :], gamma, 0.0)
        if S_POWER > 0:
            total = tl.zeros([PARTS_BLOCK], tl.float32)
            for p in tl.range(0, n_parts, PARTS_BLOCK):
                parts = p + tl.arange(0, PARTS_BLOCK)
                total += tl.load(SUMSQ + b * n_parts + parts, mask=parts < n_parts, other=0.0)
            scale = tl.div_rn(1.0, tl.sqrt_rn(tl.sum(total, 0)) + tl.cast(eps, tl.float32))
            acc *= scale if S_POWER == 1 else scale * scale
        out = acc.to(OUT.dtype.element_ty)
        if MIRROR_DIAGONAL and ti == tj:  # Y != X: x_i . y_j and x_j . y_i differ in rounding; the lower
            out = tl.where(rows_i[:, None] >= rows_j[None, :], out, tl.trans(out))  # half, mirrored
        OUT += b * stride_ob
        # masks that are constant along rows (no per-element triangle test), or the stores are not vectorized
        tl.store(OUT + rows_i[:, None] * stride_om + rows_j[None, :], out, mask=mask)
        if ti != tj:
            tl.store(OUT + rows_j[:, None] * stride_om + rows_i[None, :], tl.trans(out),
                     mask=(rows_j < M)[:, None] & (rows_i < M)[None, :])

# tiles measured under CUDA graphs (docs/perf-notes.md): 4 warps as fast as 8 for X X^T and faster for the
# 768 x 768 products; in the CPU interpreter tiles of 32, which the tests' matrices still cross (faster than 16)
BLOCK_M, BLOCK_K, NUM_WARPS, NUM_STAGES = (32, 32, 4, 1) if INTERPRET else (128, 64, 4, 3)
PARTS_BLOCK = 8 if INTERPRET else 512  # the sums of squares summed this many at a time

def newton_schulz_gram(X, alpha=1.0, C=None, beta=0.0, gamma=0.0, sumsq=None, scale_power=1, Y=None):
    """s^scale_power (alpha X Y^T + beta C + gamma I) for X and Y (B, M, K) bf16 (Y None:
    X) with X Y^T symmetric, C (B, M, M) symmetric with unit column stride (or None), and
    s = 1 / (sqrt(sumsq.sum(1)) + eps) for sumsq (B, n) fp32 (or None: s = 1): one
    triangle of tiles computed, mirrored."""
    Y = X if Y is None else Y
    if X.dim() != 3 or Y.shape != X.shape or (C is not None and (C.shape != (X.shape[0], X.shape[1], X.shape[1])
                                                                  or C.stride(-1) != 1)):
        raise ValueError(f"newton_schulz_gram: X {tuple(X.shape)} is not (B, M, K), "
                         f"or Y {tuple(Y.shape)} not its shape, "
                         f"or C {None if C is None else tuple(C.shape)} not (B, M, M) with unit column stride")
    B, M, K = X.shape
    out = torch.empty(B, M, M, device=X.device, dtype=X.dtype)
    if sumsq is not None and (sumsq.dim() != 2 or sumsq.size(0) != B or sumsq.dtype != torch.float32
                              or not sumsq.is_contiguous()):
        raise ValueError(f"newton_schulz_gram: sumsq {tuple(sumsq.shape)} {sumsq.dtype} is not a contiguous "
                         f"({B}, n) fp32")
    Cs = out if C is None else C  # pointers the kernel never reads without HAS_C or S_POWER
    S = out if sumsq is None else sumsq
    tiles = cdiv(M, BLOCK_M)
    _newton_schulz_gram_kernel[(tiles, tiles, B)](
        X, Y, Cs, out, S, M, K, alpha, beta, gamma, 0 if sumsq is None else sumsq.size(1), EPS,
        X.stride(0), X.stride(1), X.stride(2), Y.stride(0), Y.stride(1), Y.stride(2),
        Cs.stride(0), Cs.stride(1), out.stride(0), out.stride(1),
        HAS_C=C is not None, S_POWER=0 if sumsq is None else scale_power, MIRROR_DIAGONAL=Y is not X, BLOCK_M=BLOCK_M,
        BLOCK_K=BLOCK_K, PARTS_BLOCK=PARTS_BLOCK, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    return out

# steps grouped (see the module's docstring) where X's rows are at least GROUP_FROM times longer than its
# count of rows (at 768 x 768 the extra M x M x M products cost as much as the M x M x N ones they save):
# the first group takes up to GROUP_STEPS[0] steps, the next ones up to GROUP_STEPS[1]
GROUP_FROM, GROUP_STEPS = 2, (3, 2)

def _advance_triton(X, first, left, sumsq=None):
    """One step, or a group of them where they are left and X is wide enough. The first
    takes X unnormalised, and its sums of squares (B, n) if known (sumsq is not read
    after it)."""
    a, b, c = COEFFICIENTS
    X = X.contiguous()  # a tall input's transpose, copied to rows
    if first and sumsq is None:  # ||X||^2 as one part per matrix (torch's norm of bf16 X: one read, no fp32 copy)
        sumsq = X.norm(dim=(-2, -1)).float().square()[:, None]
    norm_parts = sumsq if first else None  # the gram kernels scale by 1 / ||X|| only in the first step
    steps = min(left, GROUP_STEPS[not first]) if X.size(2) >= GROUP_FROM * X.size(1) else 1
    A, Q = newton_schulz_gram(X, sumsq=norm_parts, scale_power=2), None  # A_0 = s^2 X X^T
    for i in range(steps):
        last = norm_parts if i == steps - 1 else None  # s once, in the last product of Q
        P = newton_schulz_gram(A, alpha=c, C=A, beta=b, gamma=a,
                               sumsq=last if Q is None else None)  # a I + b A_i + c A_i^2
        Q = P if Q is None else newton_schulz_gram(P, Y=Q, sumsq=last)  # P_i ... P_0 (times s)
        if i < steps - 1:
            A = newton_schulz_gram(newton_schulz_gram(P), Y=A)  # A_i+1 = P_i^2 A_i
    return torch.bmm(Q, X), steps

@torch.no_grad()
def newton_schulz(G, steps=5, backend="auto", sumsq=None):
    """About U V^T of G = U S V^T (per matrix of a stack), in bf16, by `steps` quintic
    Newton-Schulz steps; by the Triton kernel or PyTorch as `backend` says. sumsq: G's
    squares (as bf16) summed in parts, (B, n) fp32, if the caller has them (muon_momentum
    does): the kernel's first step then reads no more than G itself."""
    limit = None if G.dim() in (2, 3) and G.numel() > 0 else f"shape {tuple(G.shape)} is not (M, N) or (B, M, N)"
    if not use_triton("newton_schulz", backend, G, limit=limit):
        return newton_schulz_ref(G, steps)
    advance = lambda X, first, left: _advance_triton(X, first, left, sumsq)
    return _iterate(G, steps, torch.bfloat16, advance)
