"""
SwiGLU's gating: y = silu(a) * b, elementwise, silu(a) = a * sigmoid(a), with a (the gate) and
b (up) the two halves of one tensor x = [a, b] along its last dim, as F.glu takes its input: the
MLP's fused projection x = h @ [W_gate; W_up].

Forward:  y = a * s * b,  with s = sigmoid(a)
Backward: dx = [da, db],  da = dy * b * s * (1 + a * (1 - s)),  db = dy * a * s
The backward writes dx whole, in x's layout: no concatenation of two halves after it. It recomputes
s from a rather than saving silu(a): one tensor less written and read. Asked (swiglu_bwd_with_y),
it writes y again in the same pass, for a model that keeps x but not y, which the next matmul would
keep for its weight gradient (model.py, recompute='activation'). Arithmetic in fp32, rounded once
(torch rounds silu(a) first).

Constraints: x of shape (..., 2N), fp32, bf16 or fp16, any row strides with contiguous columns;
y and dx in x's dtype, contiguous.
"""
from typing import Tuple

import torch
import torch.nn.functional as F

from kernels.backend import triton, tl, use_triton, as_rows, for_compile, launch, cdiv, next_power_of_2

def swiglu_ref(x):
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up

def swiglu_backward_ref(dy, x):
    """(dx, y): swiglu_ref's gradient, as autograd computes it, and its output."""
    gate, up = x.chunk(2, dim=-1)
    s = F.silu(gate)
    dx = torch.cat((torch.ops.aten.silu_backward((dy * up).to(s.dtype), gate), (dy * s).to(up.dtype)), dim=-1)
    return dx, s * up

@triton.jit
def _swiglu_fwd_kernel(
    X,       # (M, 2N) gate then up, rows stride_x apart
    Y,       # (M, N) output, contiguous
    N, stride_x,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    a = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(X + row * stride_x + N + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (a * tl.sigmoid(a) * b).to(Y.dtype.element_ty), mask=mask)

@triton.jit
def _swiglu_bwd_kernel(
    DY,      # (M, N) gradient of y, rows stride_dy apart
    X,       # (M, 2N) gate then up, rows stride_x apart
    DX,      # (M, 2N) gradient of x, contiguous
    Y,       # (M, N) the forward's output made again, contiguous; written only if WITH_Y
    N, stride_dy, stride_x,
    WITH_Y: tl.constexpr, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    dy = tl.load(DY + row * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(X + row * stride_x + N + cols, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    tl.store(DX + row * 2 * N + cols, (dy * b * s * (1.0 + a * (1.0 - s))).to(DX.dtype.element_ty), mask=mask)
    tl.store(DX + row * 2 * N + N + cols, (dy * a * s).to(DX.dtype.element_ty), mask=mask)
    if WITH_Y:
        tl.store(Y + row * N + cols, (a * s * b).to(Y.dtype.element_ty), mask=mask)

BLOCK_N = 4096  # columns per program; chosen by `python bench.py --tune=True`: docs/perf-notes.md
NUM_WARPS = 16

def _grid(M, N):
    block = min(BLOCK_N, next_power_of_2(N))
    return (M, cdiv(N, block)), block

def _halves(x):
    """x's rows (a view where it can be) and N, the width of each half."""
    if x.shape[-1] % 2:
        raise ValueError(f"swiglu: x {tuple(x.shape)} must have an even last dim (gate and up, side by side)")
    return as_rows(x), x.shape[-1] // 2

def _empty_y(x):
    """y's tensor for x (the fake forward under torch.compile, and the launchers' own)."""
    return x.new_empty((*x.shape[:-1], x.shape[-1] // 2))

@for_compile("swiglu_fwd", _empty_y)
def swiglu_fwd(x: torch.Tensor) -> torch.Tensor:
    rows, N = _halves(x)
    y = _empty_y(x)
    if y.numel() > 0:
        grid, block = _grid(rows.shape[0], N)
        launch(_swiglu_fwd_kernel)[grid](rows, y, N, rows.stride(0), BLOCK_N=block, num_warps=NUM_WARPS)
    return y

def _fake_swiglu_bwd(dy, x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)

def _fake_swiglu_bwd_with_y(dy, x):
    return _fake_swiglu_bwd(dy, x), _empty_y(x)

def _swiglu_bwd(dy, x, y):
    """dx by the backward kernel, which also writes the forward's output into y unless y is None: the
    plain backward makes no tensor for it (each costs the eager step host time)."""
    rows, N = _halves(x)
    if dy.shape != (*x.shape[:-1], N):
        raise ValueError(f"swiglu: dy {tuple(dy.shape)} must be x {tuple(x.shape)} with half its last dim")
    dy2 = as_rows(dy)
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if dx.numel() > 0:
        grid, block = _grid(rows.shape[0], N)
        launch(_swiglu_bwd_kernel)[grid](
            dy2, rows, dx, dx if y is None else y, N, dy2.stride(0), rows.stride(0),
            WITH_Y=y is not None, BLOCK_N=block, num_warps=NUM_WARPS)
    return dx

@for_compile("swiglu_bwd", _fake_swiglu_bwd)
def swiglu_bwd(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return _swiglu_bwd(dy, x, None)

@for_compile("swiglu_bwd_with_y", _fake_swiglu_bwd_with_y)
def swiglu_bwd_with_y(dy: torch.Tensor, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """swiglu_bwd's dx, and the forward's output made again in the same pass."""
    y = _empty_y(x)
    return _swiglu_bwd(dy, x, y), y

class SwiGLUFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return swiglu_fwd(x)

    @staticmethod
    def backward(ctx, dy):
        return swiglu_bwd(dy, *ctx.saved_tensors)

def swiglu(x, backend="auto"):
    """F.silu(gate) * up with gate, up = x.chunk(2, dim=-1) (F.glu's layout), by the Triton kernel or
    PyTorch as `backend` says (see kernels/backend.py)."""
    if not use_triton("swiglu", backend, x):
        return swiglu_ref(x)
    return SwiGLUFunction.apply(x)

def swiglu_backward(dy, x, backend="auto"):
    """(dx, y): swiglu's backward given its output's gradient dy, and its output y made again in the
    same pass (Triton) or by swiglu_ref (PyTorch). For a caller that keeps x and not y (model.py's
    recompute='activation')."""
    if not use_triton("swiglu", backend, x, dy):
        return swiglu_backward_ref(dy, x)
    return swiglu_bwd_with_y(dy, x)
