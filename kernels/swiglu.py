"""
SwiGLU's gating: y = silu(gate) * up, elementwise, silu(a) = a * sigmoid(a).

Forward:  y = a * s * b,  with s = sigmoid(a), a = gate, b = up
Backward: da = dy * b * s * (1 + a * (1 - s)),   db = dy * a * s
The backward recomputes s from a rather than saving silu(a): one tensor less
written and read. Asked (swiglu_bwd_with_y), it writes y again in the same pass, for a model that
keeps gate and up but not y, which the next matmul would keep for its weight gradient
(model.py, recompute='activation'). Arithmetic in fp32, rounded once (torch rounds
silu(a) first).

Constraints: gate and up of one shape (..., N), fp32, bf16 or fp16, any row strides
with contiguous columns (the two halves of the MLP's fused projection are read in
place). y in torch's promoted dtype of the two; da, db in gate's and up's dtypes.
"""
from typing import Tuple

import torch
import torch.nn.functional as F

from kernels.backend import triton, tl, use_triton, as_rows, for_compile, launch, cdiv, next_power_of_2

def swiglu_ref(gate, up):
    return F.silu(gate) * up

def swiglu_backward_ref(dy, gate, up):
    """(dgate, dup, y): swiglu_ref's gradients, as autograd computes them, and its output."""
    s = F.silu(gate)
    return torch.ops.aten.silu_backward((dy * up).to(s.dtype), gate), (dy * s).to(up.dtype), s * up

@triton.jit
def _swiglu_fwd_kernel(
    A,       # (M, N) gate, rows stride_a apart
    B,       # (M, N) up, rows stride_b apart
    Y,       # (M, N) output, contiguous
    N, stride_a, stride_b,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    a = tl.load(A + row * stride_a + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride_b + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (a * tl.sigmoid(a) * b).to(Y.dtype.element_ty), mask=mask)

@triton.jit
def _swiglu_bwd_kernel(
    DY,      # (M, N) gradient of y, rows stride_dy apart
    A,       # (M, N) gate, rows stride_a apart
    B,       # (M, N) up, rows stride_b apart
    DA,      # (M, N) gradient of gate, contiguous
    DB,      # (M, N) gradient of up, contiguous
    Y,       # (M, N) the forward's output made again, contiguous; written only if WITH_Y
    N, stride_dy, stride_a, stride_b,
    WITH_Y: tl.constexpr, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    dy = tl.load(DY + row * stride_dy + cols, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(A + row * stride_a + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + row * stride_b + cols, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    tl.store(DA + row * N + cols, (dy * b * s * (1.0 + a * (1.0 - s))).to(DA.dtype.element_ty), mask=mask)
    tl.store(DB + row * N + cols, (dy * a * s).to(DB.dtype.element_ty), mask=mask)
    if WITH_Y:
        tl.store(Y + row * N + cols, (a * s * b).to(Y.dtype.element_ty), mask=mask)

BLOCK_N = 4096  # columns per program; chosen by `python bench.py --tune=True`: docs/perf-notes.md
NUM_WARPS = 16

def _grid(M, N):
    block = min(BLOCK_N, next_power_of_2(N))
    return (M, cdiv(N, block)), block

def _check(gate, up):
    if gate.shape != up.shape:
        raise ValueError(f"swiglu: gate {tuple(gate.shape)} and up {tuple(up.shape)} must have one shape")

def _fake_swiglu_fwd(gate, up):
    return gate.new_empty(gate.shape, dtype=torch.promote_types(gate.dtype, up.dtype))

@for_compile("swiglu_fwd", _fake_swiglu_fwd)
def swiglu_fwd(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    _check(gate, up)
    a, b = as_rows(gate), as_rows(up)
    y = torch.empty(gate.shape, dtype=torch.promote_types(gate.dtype, up.dtype), device=gate.device)
    if y.numel() > 0:
        grid, block = _grid(*a.shape)
        launch(_swiglu_fwd_kernel)[grid](
            a, b, y, a.shape[1], a.stride(0), b.stride(0), BLOCK_N=block, num_warps=NUM_WARPS)
    return y

def _fake_swiglu_bwd(dy, gate, up):
    return torch.empty_like(gate, memory_format=torch.contiguous_format), \
        torch.empty_like(up, memory_format=torch.contiguous_format)

def _fake_swiglu_bwd_with_y(dy, gate, up):
    return (*_fake_swiglu_bwd(dy, gate, up),
            gate.new_empty(gate.shape, dtype=torch.promote_types(gate.dtype, up.dtype)))

def _swiglu_bwd(dy, gate, up, y):
    """(dgate, dup) by the backward kernel, which also writes the forward's output into y unless
    y is None: the plain backward makes no tensor for it (each costs the eager step host time)."""
    _check(gate, up)
    a, b, dy2 = as_rows(gate), as_rows(up), as_rows(dy)
    da = torch.empty(gate.shape, dtype=gate.dtype, device=gate.device)
    db = torch.empty(up.shape, dtype=up.dtype, device=up.device)
    if da.numel() > 0:
        grid, block = _grid(*a.shape)
        launch(_swiglu_bwd_kernel)[grid](
            dy2, a, b, da, db, da if y is None else y, a.shape[1], dy2.stride(0), a.stride(0), b.stride(0),
            WITH_Y=y is not None, BLOCK_N=block, num_warps=NUM_WARPS)
    return da, db

@for_compile("swiglu_bwd", _fake_swiglu_bwd)
def swiglu_bwd(dy: torch.Tensor, gate: torch.Tensor, up: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    return _swiglu_bwd(dy, gate, up, None)

@for_compile("swiglu_bwd_with_y", _fake_swiglu_bwd_with_y)
def swiglu_bwd_with_y(dy: torch.Tensor, gate: torch.Tensor, up: torch.Tensor,
                      ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """swiglu_bwd's dgate and dup, and the forward's output made again in the same pass."""
    y = gate.new_empty(gate.shape, dtype=torch.promote_types(gate.dtype, up.dtype))
    return (*_swiglu_bwd(dy, gate, up, y), y)

class SwiGLUFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, gate, up):
        ctx.save_for_backward(gate, up)
        return swiglu_fwd(gate, up)

    @staticmethod
    def backward(ctx, dy):
        return swiglu_bwd(dy, *ctx.saved_tensors)

def swiglu(gate, up, backend="auto"):
    """F.silu(gate) * up, by the Triton kernel or PyTorch as `backend` says
    (see kernels/backend.py)."""
    if not use_triton("swiglu", backend, gate, up):
        return swiglu_ref(gate, up)
    return SwiGLUFunction.apply(gate, up)

def swiglu_backward(dy, gate, up, backend="auto"):
    """(dgate, dup, y): swiglu's backward given its output's gradient dy, and its output y made
    again in the same pass (Triton) or by swiglu_ref (PyTorch). For a caller that keeps gate and
    up and not y (model.py's recompute='activation')."""
    if not use_triton("swiglu", backend, gate, up, dy):
        return swiglu_backward_ref(dy, gate, up)
    return swiglu_bwd_with_y(dy, gate, up)
