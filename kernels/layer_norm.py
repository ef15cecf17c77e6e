"""
LayerNorm over the last dimension: F.layer_norm(x, (N,), weight, bias, eps).

Forward, per row x of width N, statistics in fp32:
    mean = sum(x) / N,   var = sum((x - mean)^2) / N,   rstd = 1 / sqrt(var + eps)
    xhat = (x - mean) * rstd,   y = xhat * w + b
Backward, with g = dy * w:
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
    dw = sum over rows of dy * xhat,   db = sum over rows of dy
The forward saves mean and rstd (fp32, one each per row), so the backward reads x, dy
and w once and never recomputes the statistics from scratch. dw and db: each backward
program walks a contiguous range of rows keeping fp32 partial sums in registers, writes
them to a (programs, N) buffer, and one torch .sum(0) reduces that: no atomics, no
locks, the same bits on every run.

Constraints: x, weight and bias in fp32, bf16 or fp16, and they may differ (as under
autocast); 1 <= N <= MAX_WIDTH, one row per program held in registers. The output
dtype is what F.layer_norm gives: x.dtype, or fp32 under CUDA autocast (layer_norm is
on autocast's fp32 list there; CPU autocast leaves it alone).
"""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from kernels.backend import triton, tl, use_triton, num_sms

MAX_WIDTH = 65536  # a row must fit in one program's registers

def _width_problem(N):
    """Why the kernel cannot take rows of width N, or None."""
    return None if 1 <= N <= MAX_WIDTH else f"width {N} is outside the kernel's 1..{MAX_WIDTH}"

def layer_norm_ref(x, weight, bias=None, eps=1e-5):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)

@triton.jit
def _layer_norm_fwd_kernel(
    X,       # (M, N) input, rows stride_x apart, columns contiguous
    W,       # (N,) weight
    B,       # (N,) bias; not read when HAS_BIAS is False
    Y,       # (M, N) output, contiguous
    Mean,    # (M,) fp32 row means, kept for the backward
    Rstd,    # (M,) fp32 row 1/std, kept for the backward
    stride_x, N, eps,
    HAS_BIAS: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)  # padding must not count in the variance
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=0) / N + eps)
    y = xc * rstd * tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    if HAS_BIAS:
        y += tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)

@triton.jit
def _layer_norm_bwd_kernel(
    DY,      # (M, N) gradient of the output, rows stride_dy apart
    X,       # (M, N) forward input, rows stride_x apart
    W,       # (N,) weight
    Mean,    # (M,) fp32 from the forward
    Rstd,    # (M,) fp32 from the forward
    DX,      # (M, N) gradient of the input, contiguous
    DW,      # (programs, N) fp32 partial sums of dy * xhat, one row per program
    DB,      # (programs, N) fp32 partial sums of dy, one row per program
    M, N, stride_x, stride_dy,
    rows_per_program,  # program pid takes rows pid * rows_per_program onwards
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
    db = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for i in range(rows_per_program):
        row = pid.to(tl.int64) * rows_per_program + i
        mask = (cols < N) & (row < M)  # the last program's range may run past M
        x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(Rstd + row, mask=row < M, other=0.0)
        xhat = tl.where(mask, (x - tl.load(Mean + row, mask=row < M, other=0.0)) * rstd, 0.0)
        g = dy * w
        dx = (g - xhat * (tl.sum(xhat * g, axis=0) / N) - tl.sum(g, axis=0) / N) * rstd
        tl.store(DX + row * N + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * xhat
        db += dy
    tl.store(DW + pid * N + cols, dw, mask=cols < N)
    tl.store(DB + pid * N + cols, db, mask=cols < N)

def _rows(t, N):
    """View t as (M, N) rows with contiguous columns, copying only if it must."""
    t = t.reshape(-1, N)
    return t if t.stride(-1) == 1 else t.contiguous()

def _block_and_warps(N):
    BLOCK_N = triton.next_power_of_2(N)
    return BLOCK_N, min(max(BLOCK_N // 256, 1), 32)  # about 8 fp32 values per thread

def layer_norm_fwd(x, weight, bias, eps, out_dtype):
    """x (..., N) -> y (..., N) in out_dtype, plus fp32 mean and rstd of shape (M,)."""
    N = x.shape[-1]
    if _width_problem(N):
        raise ValueError(f"layer_norm: {_width_problem(N)}")
    if weight.shape != (N,) or (bias is not None and bias.shape != (N,)):
        raise ValueError(f"layer_norm: weight/bias must have shape ({N},), got "
                         f"{tuple(weight.shape)}/{None if bias is None else tuple(bias.shape)}")
    x2 = _rows(x, N)
    M = x2.shape[0]
    y = torch.empty((M, N), dtype=out_dtype, device=x.device)
    mean = torch.empty(M, dtype=torch.float32, device=x.device)
    rstd = torch.empty(M, dtype=torch.float32, device=x.device)
    if M > 0:
        BLOCK_N, num_warps = _block_and_warps(N)
        weight = weight.contiguous()
        _layer_norm_fwd_kernel[(M,)](
            x2, weight, weight if bias is None else bias.contiguous(), y, mean, rstd,
            x2.stride(0), N, eps, HAS_BIAS=bias is not None, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return y.view(x.shape), mean, rstd

def layer_norm_bwd(dy, x, weight, mean, rstd):
    """Gradients of layer_norm_fwd: dx in x.dtype, and dw, db stacked as (2, N) fp32."""
    N = x.shape[-1]
    x2, dy2 = _rows(x, N), _rows(dy, N)
    M = x2.shape[0]
    dx = torch.empty((M, N), dtype=x.dtype, device=x.device)
    rows_per_program = max(1, triton.cdiv(M, 4 * num_sms(x.device)))
    programs = max(1, triton.cdiv(M, rows_per_program))
    partial = torch.empty((2, programs, N), dtype=torch.float32, device=x.device)  # [dw; db], one row per program
    if M == 0:
        partial.zero_()
    else:
        BLOCK_N, num_warps = _block_and_warps(N)
        _layer_norm_bwd_kernel[(programs,)](
            dy2, x2, weight.contiguous(), mean, rstd, dx, partial[0], partial[1],
            M, N, x2.stride(0), dy2.stride(0), rows_per_program, BLOCK_N=BLOCK_N, num_warps=num_warps,
            enable_fp_fusion=False)  # a fused dy*w - mean(g) keeps the product's rounding error, which
                                     # rstd then magnifies: at N=1 dx must be exactly 0 and was not
    return dx.view(x.shape), partial.sum(1)

# Custom ops: under torch.compile each launcher is one opaque graph node, not a graph break.
@torch.library.custom_op("kernels::layer_norm_fwd", mutates_args=())
def _layer_norm_fwd_op(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                       eps: float, out_dtype: torch.dtype) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return layer_norm_fwd(x, weight, bias, eps, out_dtype)

@_layer_norm_fwd_op.register_fake
def _(x, weight, bias, eps, out_dtype):
    M = x.numel() // x.shape[-1]
    return (x.new_empty(x.shape, dtype=out_dtype),
            x.new_empty(M, dtype=torch.float32), x.new_empty(M, dtype=torch.float32))

@torch.library.custom_op("kernels::layer_norm_bwd", mutates_args=())
def _layer_norm_bwd_op(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor,
                       rstd: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    return layer_norm_bwd(dy, x, weight, mean, rstd)

@_layer_norm_bwd_op.register_fake
def _(dy, x, weight, mean, rstd):
    return torch.empty_like(x), x.new_empty((2, x.shape[-1]), dtype=torch.float32)

class LayerNormFunction(torch.autograd.Function):
    """Autograd for the kernel. Eager mode calls the launchers directly: a custom op
    call costs about 0.1 ms of Python per call (measured, docs/perf-notes.md), more
    than the kernel itself at GPT-2 sizes. While torch.compile traces, the same steps
    go through the custom ops."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, out_dtype):
        fwd = _layer_norm_fwd_op if torch.compiler.is_compiling() else layer_norm_fwd
        y, mean, rstd = fwd(x, weight, bias, eps, out_dtype)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.bias_dtype = None if bias is None else bias.dtype
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        bwd = _layer_norm_bwd_op if torch.compiler.is_compiling() else layer_norm_bwd
        dx, dwdb = bwd(dy, x, weight, mean, rstd)
        db = None if ctx.bias_dtype is None else dwdb[1].to(ctx.bias_dtype)
        return dx, dwdb[0].to(weight.dtype), db, None, None

def layer_norm(x, weight, bias=None, eps=1e-5, backend="auto"):
    """F.layer_norm(x, (x.shape[-1],), weight, bias, eps), by the Triton kernel or by
    PyTorch as `backend` says (see kernels/backend.py)."""
    if not use_triton("layer_norm", backend, x, weight, bias, limit=_width_problem(x.shape[-1])):
        return layer_norm_ref(x, weight, bias, eps)
    autocast_fp32 = x.device.type == "cuda" and torch.is_autocast_enabled("cuda")
    return LayerNormFunction.apply(x, weight, bias, eps, torch.float32 if autocast_fp32 else x.dtype)
