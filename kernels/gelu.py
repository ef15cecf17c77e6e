"""
GELU with an optional bias added first: y = gelu(x + bias), in the exact erf form
nanoGPT uses or the tanh approximation (F.gelu's approximate='none' | 'tanh').

Forward, u = x + bias (or x):
    erf:  gelu(u) = u * P(u),  P(u) = (1 + erf(u / sqrt(2))) / 2
    tanh: gelu(u) = u * (1 + t) / 2,  t = tanh(k * (u + c * u^3)),  k = sqrt(2 / pi), c = 0.044715
Backward:
    erf:  gelu'(u) = P(u) + u * exp(-u^2 / 2) / sqrt(2 pi)
    tanh: gelu'(u) = (1 + t) / 2 + u * (1 - t^2) * k * (1 + 3 c u^2) / 2
    dx = dy * gelu'(u),   dbias = sum over rows of dx
The backward recomputes u from x and the bias (nothing else is saved); asked
(gelu_bwd_with_y), the same pass writes y again, for a model that keeps GELU's input but not its output, which the
next matmul would keep for its weight gradient (model.py, recompute='activation'). dbias: each
backward program sums its tile's dx over its BLOCK_M rows in fp32 and writes that
row of partial sums; one torch sum reduces the (M / BLOCK_M, N) buffer: no atomics,
deterministic.
Arithmetic in fp32, rounded once.

Constraints: x (..., N) and bias (N,) in fp32, bf16 or fp16, any row stride with
contiguous columns. The result is in x's dtype even when the bias is fp32 (as in an
autocast model, where nn.Linear adds its fp32 bias into a bf16 output): this op
replaces linear-with-bias followed by GELU, with the bias add moved into it.
"""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from kernels.backend import triton, tl, use_triton, as_rows, for_compile, launch, cdiv, next_power_of_2

APPROXIMATIONS = ("none", "tanh")

def gelu_ref(x, bias=None, approximate="none"):
    return F.gelu(x if bias is None else x + bias, approximate=approximate).to(x.dtype)

def gelu_backward_ref(dy, x, bias=None, approximate="none"):
    """(dx, dbias or None, y): gelu_ref's gradients, as autograd computes them, and its output."""
    u = x if bias is None else x + bias
    du = torch.ops.aten.gelu_backward(dy.to(u.dtype), u, approximate=approximate)
    dbias = None if bias is None else du.reshape(-1, du.shape[-1]).sum(0).to(bias.dtype)
    return du.to(x.dtype), dbias, F.gelu(u, approximate=approximate).to(x.dtype)

@triton.jit
def _gelu_and_grad(u, TANH: tl.constexpr):
    """gelu(u) and gelu'(u), fp32."""
    if TANH:
        # with s = sigmoid(2z): (1 + t) / 2 = s and 1 - t^2 = 4 s (1 - s); 1 - s taken as
        # sigmoid(-2z), since 1 - t * t loses its digits where t is near +-1
        z = 0.7978845608028654 * (u + 0.044715 * u * u * u)
        s = tl.sigmoid(2.0 * z)
        return u * s, s + 2.0 * u * s * tl.sigmoid(-2.0 * z) * 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * u * u)
    else:
        p = 0.5 * (1.0 + tl.erf(u * 0.7071067811865476))
        return u * p, p + u * 0.3989422804014327 * tl.exp(-0.5 * u * u)

@triton.jit
def _tile(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """This program's tile: its rows, columns and mask. No pointer goes in: torch.compile's
    analysis of what a kernel writes follows each store's address back through the helpers
    that made it and takes every pointer they were given for written (then copies it twice
    per call: tests/inductor_writes.py)."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    return rows, cols, (rows < M)[:, None] & (cols < N)[None, :]

@triton.jit
def _load_u(X, Bias, rows, cols, mask, N, stride_x, HAS_BIAS: tl.constexpr):
    """u = x (+ bias) over the tile, fp32."""
    u = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    if HAS_BIAS:
        u += tl.load(Bias + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :]
    return u

@triton.jit
def _gelu_fwd_kernel(
    X,       # (M, N) input, rows stride_x apart
    Bias,    # (N,) bias; read only if HAS_BIAS
    Y,       # (M, N) output, contiguous
    M, N, stride_x,
    HAS_BIAS: tl.constexpr, TANH: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows, cols, mask = _tile(M, N, BLOCK_M, BLOCK_N)
    u = _load_u(X, Bias, rows, cols, mask, N, stride_x, HAS_BIAS)
    y, _ = _gelu_and_grad(u, TANH)
    tl.store(Y + rows[:, None] * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)

@triton.jit
def _gelu_bwd_kernel(
    DY,      # (M, N) gradient of y, rows stride_dy apart
    X,       # (M, N) forward input, rows stride_x apart
    Bias,    # (N,) bias; read only if HAS_BIAS
    DX,      # (M, N) gradient of x, contiguous
    DBias,   # (cdiv(M, BLOCK_M), N) fp32 partial sums of dx, one row per row block; written only if HAS_BIAS
    Y,       # (M, N) the forward's output made again, contiguous; written only if WITH_Y
    M, N, stride_dy, stride_x,
    HAS_BIAS: tl.constexpr, TANH: tl.constexpr, WITH_Y: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows, cols, mask = _tile(M, N, BLOCK_M, BLOCK_N)
    u = _load_u(X, Bias, rows, cols, mask, N, stride_x, HAS_BIAS)
    dy = tl.load(DY + rows[:, None] * stride_dy + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    y, grad = _gelu_and_grad(u, TANH)
    dx = dy * grad  # 0 where masked: dy is 0 there
    tl.store(DX + rows[:, None] * N + cols[None, :], dx.to(DX.dtype.element_ty), mask=mask)
    if WITH_Y:  # a constexpr: as a run-time flag it slows the kernel without y (docs/perf-notes.md)
        tl.store(Y + rows[:, None] * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
    if HAS_BIAS:
        tl.store(DBias + tl.program_id(0).to(tl.int64) * N + cols, tl.sum(dx, axis=0), mask=cols < N)

# (BLOCK_M, BLOCK_N, num_warps) by pass; tall backward tiles keep the dbias partial
# sums small (a (M / BLOCK_M, N) buffer). Chosen by `python bench.py --tune=True`; the
# backward's 4 warps by its with-y pass (recompute='activation'), which --tune does not
# time and where 2 warps measure slower: docs/perf-notes.md.
TILE = {'fwd': (4, 1024, 4), 'bwd': (4, 512, 4)}

def _grid(M, N, pass_):
    BLOCK_M, BLOCK_N, num_warps = TILE[pass_]
    BLOCK_N = min(BLOCK_N, max(1, next_power_of_2(N)))  # N = 0: an empty grid, never launched
    return (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)), dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps)

def _check(x, bias, approximate):
    if approximate not in APPROXIMATIONS:
        raise ValueError(f"gelu: approximate must be one of {APPROXIMATIONS}, got {approximate!r}")
    if bias is not None and bias.shape != (x.shape[-1],):
        raise ValueError(f"gelu: bias must have shape ({x.shape[-1]},), got {tuple(bias.shape)}")

def _fake_gelu_fwd(x, bias, approximate):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)

@for_compile("gelu_fwd", _fake_gelu_fwd)
def gelu_fwd(x: torch.Tensor, bias: Optional[torch.Tensor], approximate: str) -> torch.Tensor:
    _check(x, bias, approximate)
    x2 = as_rows(x)
    M, N = x2.shape
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        grid, meta = _grid(M, N, 'fwd')
        launch(_gelu_fwd_kernel)[grid](
            x2, x2 if bias is None else bias.contiguous(), y, M, N, x2.stride(0),
            HAS_BIAS=bias is not None, TANH=approximate == "tanh", **meta)
    return y

def _fake_gelu_bwd(dy, x, bias, approximate):
    return (torch.empty(x.shape, dtype=x.dtype, device=x.device),
            x.new_empty(0 if bias is None else x.shape[-1], dtype=torch.float32))

def _fake_gelu_bwd_with_y(dy, x, bias, approximate):
    return (*_fake_gelu_bwd(dy, x, bias, approximate), torch.empty(x.shape, dtype=x.dtype, device=x.device))

def _gelu_bwd(dy, x, bias, approximate, y):
    """(dx, dbias) by the backward kernel, which also writes the forward's output into y unless
    y is None: the plain backward makes no tensor for it (each costs the eager step host time)."""
    _check(x, bias, approximate)
    x2, dy2 = as_rows(x), as_rows(dy)
    M, N = x2.shape
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    grid, meta = _grid(M, N, 'bwd')
    partial = torch.empty((0, 0) if bias is None else (grid[0], N), dtype=torch.float32, device=x.device)
    if dx.numel() > 0:  # with no rows, partial is (0, N) and sums to zeros
        launch(_gelu_bwd_kernel)[grid](
            dy2, x2, x2 if bias is None else bias.contiguous(), dx, partial, dx if y is None else y,
            M, N, dy2.stride(0), x2.stride(0), HAS_BIAS=bias is not None, TANH=approximate == "tanh",
            WITH_Y=y is not None, **meta)
    return dx, partial.sum(0)

@for_compile("gelu_bwd", _fake_gelu_bwd)
def gelu_bwd(dy: torch.Tensor, x: torch.Tensor, bias: Optional[torch.Tensor], approximate: str,
             ) -> Tuple[torch.Tensor, torch.Tensor]:
    """dx in x's dtype, and dbias in fp32 (empty without a bias)."""
    return _gelu_bwd(dy, x, bias, approximate, None)

@for_compile("gelu_bwd_with_y", _fake_gelu_bwd_with_y)
def gelu_bwd_with_y(dy: torch.Tensor, x: torch.Tensor, bias: Optional[torch.Tensor], approximate: str,
                    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """gelu_bwd's dx and dbias, and the forward's output made again in the same pass."""
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    return (*_gelu_bwd(dy, x, bias, approximate, y), y)

def _bias_grad(dbias, bias):
    """The kernel's fp32 dbias in the bias's dtype, or None without a bias."""
    return None if bias is None else dbias.to(bias.dtype)

class GELUFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, bias, approximate):
        ctx.save_for_backward(x, bias)
        ctx.approximate = approximate
        return gelu_fwd(x, bias, approximate)

    @staticmethod
    def backward(ctx, dy):
        x, bias = ctx.saved_tensors
        dx, dbias = gelu_bwd(dy, x, bias, ctx.approximate)
        return dx, _bias_grad(dbias, bias), None

def gelu(x, bias=None, approximate="none", backend="auto"):
    """F.gelu(x + bias, approximate=approximate) in x's dtype (see above), by the Triton
    kernel or PyTorch as `backend` says (see kernels/backend.py)."""
    if not use_triton("gelu", backend, x, bias):
        return gelu_ref(x, bias, approximate)
    return GELUFunction.apply(x, bias, approximate)

def gelu_backward(dy, x, bias=None, approximate="none", backend="auto"):
    """(dx, dbias or None, y): gelu's backward given its output's gradient dy, and its output y
    made again in the same pass (Triton) or by gelu_ref (PyTorch). For a caller that keeps x and
    not y (model.py's recompute='activation')."""
    if not use_triton("gelu", backend, x, bias, dy):
        return gelu_backward_ref(dy, x, bias, approximate)
    dx, dbias, y = gelu_bwd_with_y(dy, x, bias, approximate)
    return dx, _bias_grad(dbias, bias), y
