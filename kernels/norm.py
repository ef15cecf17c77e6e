"""
LayerNorm and RMSNorm over the last dimension, each optionally fused with the
residual add before it. One kernel pair serves both norms: RMSNorm is LayerNorm
without the mean and the bias (IS_RMS), so they share every line but those.

Forward, per row of width N, statistics in fp32. With a residual, the normalised
input is h = x + residual (written out too, rounded to its dtype, and normalised
as rounded, as the two torch ops in sequence would do); without one, h = x.
    LayerNorm: mean = sum(h) / N,  xhat = (h - mean) * rstd,  rstd = 1 / sqrt(sum((h - mean)^2) / N + eps)
    RMSNorm:   mean = 0,           xhat = h * rstd,           rstd = 1 / sqrt(sum(h^2) / N + eps)
    y = xhat * w (+ b)
Backward, with g = dy * w and dh_out the gradient reaching h from its other uses
(the residual stream; zero without a residual):
    dh = rstd * (g - xhat * mean(g * xhat) - mean(g)) + dh_out       (RMSNorm: no mean(g) term)
    dx = dresidual = dh,   dw = sum over rows of dy * xhat,   db = sum over rows of dy
The forward saves rstd (and mean for LayerNorm), fp32, one per row, in one (1 or 2, M)
tensor, so the backward reads h, dy, w once and never recomputes the statistics from
scratch. Asked (norm_bwd_with_y), the backward pass writes y again from h and those
statistics, for a caller that keeps h but not y, which the next matmul would keep for
its weight gradient (model.py's LinearOfNorm, for recompute). dw and db: each
backward program walks a contiguous range of rows keeping fp32 partial sums in
registers and writes them to an (N, programs) buffer ((2, N, programs) with a bias)
that one torch sum reduces: no atomics, no locks, the same bits on every run. Each
tensor made or viewed per call costs the eager step host time, so the launchers make
as few as they can: one for both statistics, one for both partial sums, no row views
of contiguous inputs.

Constraints: inputs, weight and bias in fp32, bf16 or fp16, and they may differ (as
under autocast); a weight (without one, elementwise_affine=False, PyTorch runs);
1 <= N <= MAX_WIDTH, a whole row in one program's registers. The output dtype is the
torch op's: h's dtype (torch's type promotion of x and residual), or fp32 under CUDA
autocast where this torch lists the op as an fp32 op (layer_norm always; rms_norm from
some release after 2.11); CPU autocast leaves both alone. Or the out_dtype asked for: a
model under autocast asks for its next matmul's dtype, so y is rounded once as it is
stored, instead of written in fp32 and cast by another kernel (and its gradient read in
that dtype, instead of cast up first).
"""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from kernels.backend import triton, tl, use_triton, rows_of, row_ranges, for_compile, launch, next_power_of_2

MAX_WIDTH = 65536  # a row must fit in one program's registers
# The norms CUDA autocast runs in fp32, asked of this torch's dispatcher: layer_norm is
# on autocast's fp32 list, rms_norm only in newer releases (not in 2.11, yes in 2.13).
AUTOCAST_FP32 = {op: torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", "AutocastCUDA")
                 for op in ("layer_norm", "rms_norm")}

def _width_problem(N):
    """Why the kernels cannot take rows of width N, or None."""
    return None if 1 <= N <= MAX_WIDTH else f"width {N} is outside the kernel's 1..{MAX_WIDTH}"

def _with_residual(norm, x, residual, out_dtype):
    """norm(h) (cast to out_dtype if given), or (norm(h), h) with a residual, h = x + residual."""
    h = x if residual is None else x + residual
    y = norm(h) if out_dtype is None else norm(h).to(out_dtype)
    return y if residual is None else (y, h)

def layer_norm_ref(x, weight, bias=None, eps=1e-5, residual=None, out_dtype=None):
    """F.layer_norm over the last dim; with a residual, (F.layer_norm(h), h) for h = x + residual."""
    return _with_residual(lambda h: F.layer_norm(h, (h.shape[-1],), weight, bias, eps), x, residual, out_dtype)

def rms_norm_ref(x, weight, eps=1e-6, residual=None, out_dtype=None):
    """F.rms_norm over the last dim; with a residual, (F.rms_norm(h), h) for h = x + residual."""
    return _with_residual(lambda h: F.rms_norm(h, (h.shape[-1],), weight, eps), x, residual, out_dtype)

@triton.jit
def _norm_fwd_kernel(
    X,       # (M, N) input, rows stride_x apart, columns contiguous
    R,       # (M, N) residual, rows stride_r apart; read only if HAS_RESIDUAL
    W,       # (N,) weight
    B,       # (N,) bias; read only if HAS_BIAS
    Y,       # (M, N) output, contiguous
    H,       # (M, N) x + residual, contiguous; written only if HAS_RESIDUAL
    Stats,   # (1 or 2, M) fp32 for the backward: row 1/std (1/rms for RMSNorm), then (LayerNorm) row means
    M, N, stride_x, stride_r, eps,
    rows_per_program,  # a multiple of BLOCK_M: program pid takes rows pid * rows_per_program onwards
    IS_RMS: tl.constexpr, HAS_RESIDUAL: tl.constexpr, HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGES: tl.constexpr,
):
    eps = tl.cast(eps, tl.float32)  # torch.compile passes Python floats as fp64
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    if HAS_BIAS:
        b = tl.load(B + cols, mask=cols < N, other=0.0).to(tl.float32)
    # tiles of BLOCK_M whole rows; STAGES > 1 keeps the next tiles' loads in flight
    for i in tl.range(0, rows_per_program, BLOCK_M, num_stages=STAGES):
        rows = pid.to(tl.int64) * rows_per_program + i + tl.arange(0, BLOCK_M)
        row_ok = rows < M  # the last program's range may run past M
        mask = row_ok[:, None] & (cols < N)[None, :]
        h = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        if HAS_RESIDUAL:
            h += tl.load(R + rows[:, None] * stride_r + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            h = h.to(H.dtype.element_ty)  # normalise h as stored, which the backward reads back
            tl.store(H + rows[:, None] * N + cols[None, :], h, mask=mask)
            h = h.to(tl.float32)
        if IS_RMS:
            hc = h
        else:
            mean = tl.sum(h, axis=1) / N
            hc = tl.where(mask, h - mean[:, None], 0.0)  # padding must not count in the variance
            tl.store(Stats + M + rows, mean, mask=row_ok)
        rstd = tl.rsqrt(tl.sum(hc * hc, axis=1) / N + eps)
        y = hc * rstd[:, None] * w[None, :]
        if HAS_BIAS:
            y += b[None, :]
        tl.store(Y + rows[:, None] * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
        tl.store(Stats + rows, rstd, mask=row_ok)

@triton.jit
def _norm_bwd_kernel(
    DY,      # (M, N) gradient of y, rows stride_dy apart
    H,       # (M, N) the forward's normalised input (x, or x + residual), rows stride_h apart
    DH_OUT,  # (M, N) gradient reaching h from its other uses, rows stride_dho apart; read only if HAS_DH_OUT
    W,       # (N,) weight
    B,       # (N,) bias; read only if WITH_Y and HAS_BIAS
    Stats,   # (1 or 2, M) fp32 from the forward: rstd, then (LayerNorm) mean
    DH,      # (M, N) gradient of h (= of x and of the residual), contiguous
    DWB,     # (N, programs) fp32 partial sums of dy * xhat, one column per program; with HAS_BIAS (2, N, programs),
             # then of dy
    Y,       # (M, N) the forward's output made again, contiguous; written only if WITH_Y
    M, N, stride_h, stride_dy, stride_dho,
    rows_per_program,  # a multiple of BLOCK_M: program pid takes rows pid * rows_per_program onwards
    IS_RMS: tl.constexpr, HAS_DH_OUT: tl.constexpr, HAS_BIAS: tl.constexpr, WITH_Y: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGES: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    if WITH_Y and HAS_BIAS:
        b = tl.load(B + cols, mask=cols < N, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in tl.range(0, rows_per_program, BLOCK_M, num_stages=STAGES):
        rows = pid.to(tl.int64) * rows_per_program + i + tl.arange(0, BLOCK_M)
        row_ok = rows < M  # the last program's range may run past M
        mask = row_ok[:, None] & (cols < N)[None, :]
        h = tl.load(H + rows[:, None] * stride_h + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + rows[:, None] * stride_dy + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(Stats + rows, mask=row_ok, other=0.0)
        if IS_RMS:
            xhat = h * rstd[:, None]
        else:
            mean = tl.load(Stats + M + rows, mask=row_ok, other=0.0)
            xhat = tl.where(mask, (h - mean[:, None]) * rstd[:, None], 0.0)
        if WITH_Y:  # the forward's arithmetic, in its order: (h - mean) * rstd * w + b
            y = xhat * w[None, :]
            if HAS_BIAS:
                y += b[None, :]
            tl.store(Y + rows[:, None] * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
        g = dy * w[None, :]
        dh = g - xhat * (tl.sum(xhat * g, axis=1) / N)[:, None]
        if not IS_RMS:
            dh -= (tl.sum(g, axis=1) / N)[:, None]
            # one element normalises to a constant: dh is exactly 0, but a fused
            # dy*w - mean(g) keeps the product's rounding error, which rstd magnifies
            dh = tl.where(N == 1, 0.0, dh)
        dh *= rstd[:, None]
        if HAS_DH_OUT:
            dh += tl.load(DH_OUT + rows[:, None] * stride_dho + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(DH + rows[:, None] * N + cols[None, :], dh.to(DH.dtype.element_ty), mask=mask)
        dw += dy * xhat
        if HAS_BIAS:
            db += dy
    # a column per program, so that the sum over programs runs along contiguous memory (faster for GPT-2's
    # LayerNorm than a sum over rows of (2, programs, N): docs/perf-notes.md)
    programs = tl.num_programs(0)
    tl.store(DWB + cols.to(tl.int64) * programs + pid, tl.sum(dw, axis=0), mask=cols < N)
    if HAS_BIAS:
        tl.store(DWB + (N + cols).to(tl.int64) * programs + pid, tl.sum(db, axis=0), mask=cols < N)

# Launch shape by pass ('fwd', 'bwd'): about TILE elements per tile (several narrow rows
# or one wide one), PER_THREAD elements per thread, programs of COLUMNS_PER_SM / BLOCK_N
# per SM (at least one) each walking a contiguous range of rows, STAGES-deep load
# pipelining along it. Chosen by `python bench.py --tune`: docs/perf-notes.md. Tiles of
# over PIPELINED_TILE_BYTES load without pipelining: the stages' buffers of two or three
# 32 KB tiles overflow Hopper's 227 KB of shared memory per block (bench.py --kernels,
# widths of 16384 and up in bf16).
TILE = {'fwd': 1024, 'bwd': 2048}
PER_THREAD = {'fwd': 32, 'bwd': 32}
COLUMNS_PER_SM = {'fwd': 32768, 'bwd': 2048}
STAGES = {'fwd': 3, 'bwd': 4}
PIPELINED_TILE_BYTES = 16384

def _launch(M, N, element_size, device, pass_):
    """(programs, rows_per_program, kernel meta-parameters) for M rows of width N whose
    widest input has elements of element_size bytes."""
    BLOCK_N = next_power_of_2(N)
    BLOCK_M = max(1, TILE[pass_] // BLOCK_N)
    num_warps = min(max(BLOCK_M * BLOCK_N // (32 * PER_THREAD[pass_]), 1), 32)
    rows_per_program, programs = row_ranges(M, device, BLOCK_M, max(1, COLUMNS_PER_SM[pass_] // BLOCK_N))
    stages = STAGES[pass_] if BLOCK_M * BLOCK_N * element_size <= PIPELINED_TILE_BYTES else 1
    return programs, rows_per_program, dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, STAGES=stages, num_warps=num_warps)

def _fake_norm_fwd(x, residual, weight, bias, eps, is_rms, out_dtype):
    h = torch.empty(0, device=x.device) if residual is None else \
        x.new_empty(x.shape, dtype=torch.promote_types(x.dtype, residual.dtype))
    stats = x.new_empty((1 if is_rms else 2, x.numel() // x.shape[-1]), dtype=torch.float32)
    return x.new_empty(x.shape, dtype=out_dtype), h, stats

@for_compile("norm_fwd", _fake_norm_fwd)
def norm_fwd(x: torch.Tensor, residual: Optional[torch.Tensor], weight: torch.Tensor,
             bias: Optional[torch.Tensor], eps: float, is_rms: bool, out_dtype: torch.dtype,
             ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x (..., N) [+ residual] -> y (..., N) in out_dtype; h = x + residual (an empty
    tensor without a residual: h is x); stats, fp32 (1 or 2, M): rstd, then (LayerNorm) mean."""
    N = x.shape[-1]
    if _width_problem(N):
        raise ValueError(f"norm: {_width_problem(N)}")
    if weight.shape != (N,) or (bias is not None and bias.shape != (N,)):
        raise ValueError(f"norm: weight/bias must have shape ({N},), got "
                         f"{tuple(weight.shape)}/{None if bias is None else tuple(bias.shape)}")
    if residual is not None and residual.shape != x.shape:
        raise ValueError(f"norm: residual shape {tuple(residual.shape)} != input shape {tuple(x.shape)}")
    x2, stride_x = rows_of(x)
    r2, stride_r = (x2, stride_x) if residual is None else rows_of(residual)
    M = x.numel() // N
    y = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    h = torch.empty(0, device=x.device) if residual is None else \
        torch.empty(x.shape, dtype=torch.promote_types(x.dtype, residual.dtype), device=x.device)
    stats = torch.empty((1 if is_rms else 2, M), dtype=torch.float32, device=x.device)
    if M > 0:
        programs, rows_per_program, meta = _launch(M, N, max(x.element_size(), r2.element_size()), x.device, 'fwd')
        launch(_norm_fwd_kernel)[(programs,)](
            x2, r2, weight.contiguous(), weight if bias is None else bias.contiguous(), y, h, stats,
            M, N, stride_x, stride_r, eps, rows_per_program,
            IS_RMS=is_rms, HAS_RESIDUAL=residual is not None, HAS_BIAS=bias is not None, **meta)
    return y, h, stats

def _fake_norm_bwd(dy, dh_out, h, weight, stats, is_rms, has_bias):
    N = h.shape[-1]
    return torch.empty(h.shape, dtype=h.dtype, device=h.device), \
        h.new_empty((2, N) if has_bias else (N,), dtype=torch.float32)

def _fake_norm_bwd_with_y(dy, dh_out, h, weight, bias, stats, is_rms, out_dtype):
    return (*_fake_norm_bwd(dy, dh_out, h, weight, stats, is_rms, bias is not None),
            h.new_empty(h.shape, dtype=out_dtype))

def _norm_bwd(dy, dh_out, h, weight, bias, stats, is_rms, has_bias, y):
    """(dh, dw or dw and db stacked) by the backward kernel, which also writes the forward's output
    into y unless y is None (then bias may be None: only the forward reads it)."""
    N = h.shape[-1]
    h2, stride_h = rows_of(h)
    dy2, stride_dy = rows_of(dy)
    dho2, stride_dho = (dy2, stride_dy) if dh_out is None else rows_of(dh_out)
    M = h.numel() // N
    dh = torch.empty(h.shape, dtype=h.dtype, device=h.device)
    programs, rows_per_program, meta = _launch(M, N, max(h.element_size(), dy.element_size(), dho2.element_size()),
                                               h.device, 'bwd')
    partial = torch.empty((2, N, programs) if has_bias else (N, programs), dtype=torch.float32, device=h.device)
    if M == 0:
        partial.zero_()
    else:
        w = weight.contiguous()
        launch(_norm_bwd_kernel)[(programs,)](
            dy2, h2, dho2, w, w if bias is None else bias.contiguous(), stats, dh, partial, dh if y is None else y,
            M, N, stride_h, stride_dy, stride_dho, rows_per_program,
            IS_RMS=is_rms, HAS_DH_OUT=dh_out is not None, HAS_BIAS=has_bias, WITH_Y=y is not None, **meta)
    return dh, partial.sum(-1)

@for_compile("norm_bwd", _fake_norm_bwd)
def norm_bwd(dy: torch.Tensor, dh_out: Optional[torch.Tensor], h: torch.Tensor, weight: torch.Tensor,
             stats: torch.Tensor, is_rms: bool, has_bias: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """Gradients of norm_fwd: dh in h's dtype (the gradient of x and of the residual),
    and dw (N,) fp32, or with has_bias dw and db stacked as (2, N)."""
    return _norm_bwd(dy, dh_out, h, weight, None, stats, is_rms, has_bias, None)

@for_compile("norm_bwd_with_y", _fake_norm_bwd_with_y)
def norm_bwd_with_y(dy: torch.Tensor, dh_out: Optional[torch.Tensor], h: torch.Tensor, weight: torch.Tensor,
                    bias: Optional[torch.Tensor], stats: torch.Tensor, is_rms: bool, out_dtype: torch.dtype,
                    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """norm_bwd's dh and dw (and db), and the forward's output y in out_dtype made again in the same
    pass from h and the forward's statistics: for a caller that keeps h but not y (model.py's
    LinearOfNorm, for recompute)."""
    y = torch.empty(h.shape, dtype=out_dtype, device=h.device)
    return (*_norm_bwd(dy, dh_out, h, weight, bias, stats, is_rms, bias is not None, y), y)

def _cast(t, dtype):
    """t (or None) in dtype; t itself where it is already (Tensor.to costs a dispatch even then)."""
    return t if t is None or t.dtype == dtype else t.to(dtype)

def weight_grads(dwdb, w_dtype, b_dtype):
    """(dw, db or None) in the weight's and the bias's dtypes, from the backward's fp32 dw, or dw and
    db stacked (b_dtype None: no bias)."""
    dw, db = (dwdb, None) if b_dtype is None else dwdb.unbind()
    return _cast(dw, w_dtype), _cast(db, b_dtype)

class NormFunction(torch.autograd.Function):
    """Autograd for both norms, with or without the residual add. Returns y, or (y, h)."""

    @staticmethod
    def forward(ctx, x, residual, weight, bias, eps, is_rms, out_dtype):
        y, h, stats = norm_fwd(x, residual, weight, bias, eps, is_rms, out_dtype)
        has_residual = residual is not None
        ctx.save_for_backward(h if has_residual else x, weight, stats)
        ctx.is_rms = is_rms
        ctx.dtypes = (None if residual is None else residual.dtype, weight.dtype,
                      None if bias is None else bias.dtype)
        ctx.set_materialize_grads(False)  # an unused h (the last block's) sends no gradient
        return (y, h) if has_residual else y

    @staticmethod
    def backward(ctx, dy, dh_out=None):
        h, weight, stats = ctx.saved_tensors
        r_dtype, w_dtype, b_dtype = ctx.dtypes
        if dy is None:  # only h was used: the norm's parameters get no gradient, as in PyTorch
            return dh_out, None if r_dtype is None else dh_out, None, None, None, None, None
        dh, dwdb = norm_bwd(dy, dh_out, h, weight, stats, ctx.is_rms, b_dtype is not None)
        # autograd casts dh to x's and the residual's dtypes where they differ from h's
        return dh, None if r_dtype is None else dh, *weight_grads(dwdb, w_dtype, b_dtype), None, None, None

def takes_triton(name, backend, x, residual, weight, bias):
    """Whether this call of the norm `name` runs the kernel: kernels/backend.py's rule, the width limit, a weight."""
    limit = "no weight (elementwise_affine=False)" if weight is None else _width_problem(x.shape[-1])
    return use_triton(name, backend, x, residual, weight, bias, limit=limit)

def output_dtype(name, x, residual, out_dtype):
    """The dtype of the norm's y: out_dtype if given, else the torch op's (see the constraints above)."""
    if out_dtype is not None:
        return out_dtype
    if AUTOCAST_FP32[name] and x.device.type == "cuda" and torch.is_autocast_enabled("cuda"):
        return torch.float32
    return x.dtype if residual is None else torch.promote_types(x.dtype, residual.dtype)

def _norm(name, x, residual, weight, bias, eps, is_rms, out_dtype, backend, ref):
    if not takes_triton(name, backend, x, residual, weight, bias):
        return ref()
    return NormFunction.apply(x, residual, weight, bias, eps, is_rms, output_dtype(name, x, residual, out_dtype))

def layer_norm(x, weight, bias=None, eps=1e-5, residual=None, out_dtype=None, backend="auto"):
    """F.layer_norm(x, (x.shape[-1],), weight, bias, eps); with a residual, (F.layer_norm(h), h)
    for h = x + residual in one pass; y in out_dtype if given. By the Triton kernel or
    PyTorch as `backend` says (see kernels/backend.py)."""
    return _norm("layer_norm", x, residual, weight, bias, eps, False, out_dtype, backend,
                 lambda: layer_norm_ref(x, weight, bias, eps, residual, out_dtype))

def rms_norm(x, weight, eps=1e-6, residual=None, out_dtype=None, backend="auto"):
    """F.rms_norm(x, (x.shape[-1],), weight, eps); with a residual, (F.rms_norm(h), h)
    for h = x + residual in one pass; y in out_dtype if given. By the Triton kernel or
    PyTorch as `backend` says."""
    return _norm("rms_norm", x, residual, weight, None, eps, True, out_dtype, backend,
                 lambda: rms_norm_ref(x, weight, eps, residual, out_dtype))
