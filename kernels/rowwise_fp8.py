"""
A matrix in fp8 (e4m3) with one scale per row, as the row-wise scaled products read it (torch._scaled_mm's
row-wise scales, kernels/linear.py's Fp8LinearOfCopy):
    q_r = 2^floor(log2(448 / max(max_j |x_rj|, 1e-12)))    448: e4m3's largest finite value
    x8_rj = e4m3(clamp(x_rj q_r, -448, 448))               rounded to nearest even
    s_r = 1 / q_r                                          x_rj = x8_rj s_r, up to e4m3's rounding (3 bits)
The row's largest entry maps into (224, 448]: no row overflows, and none loses more than one binade of e4m3's
range (a row whose largest entry is under 1e-12 is scaled as if it were 1e-12). The scales are powers of two, so
scaling is exact, here and in the products' epilogues: the cast is the only rounding. A row of zeros stays zeros.
A NaN stays NaN (the row's maximum leaves it out), and an infinite entry makes its row's scale infinite (q = 0):
the products that read a row with either come out NaN, as bf16's would. One pass: each program holds whole rows,
reads them once and writes the fp8 rows and their scales.

Constraints: x (M, N) in fp32, bf16 or fp16 with contiguous columns (any row stride); 1 <= N <= 16384 (a row is
held whole). The results: x8 (M, N) contiguous in torch.float8_e4m3fn, s (M, 1) in fp32.
"""
import math
from typing import Tuple

import torch

from kernels.backend import triton, tl, use_triton, for_compile, launch, cdiv, next_power_of_2

E4M3 = torch.float8_e4m3fn
E4M3_MAX = 448.0
MAX_WIDTH = 16384

def rowwise_fp8_ref(x):
    """(x8, s): x (M, N) in e4m3 with one fp32 scale per row, x ~ x8 * s (see above), in PyTorch ops."""
    amax = x.abs().nan_to_num(nan=0.0, posinf=math.inf).amax(-1, keepdim=True)  # (M, 1), NaN left out as tl.max does
    amax = amax.float().clamp(min=1e-12)
    q = torch.full_like(amax, E4M3_MAX).div(amax)  # IEEE division (448 / amax multiplies by a reciprocal)
    q = (q.view(torch.int32) & 0x7F800000).view(torch.float32)  # its power of two: the exponent's bits alone
    return (x.float() * q).clamp(-E4M3_MAX, E4M3_MAX).to(E4M3), q.reciprocal()

@triton.jit
def _rowwise_fp8_kernel(
    X,       # (M, N) input, rows stride_x apart, contiguous columns
    X8,      # (M, N) output in e4m3, contiguous
    S,       # (M, 1) fp32 output: each row's scale s
    M, N, stride_x,
    FP8_MAX: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    q = tl.math.div_rn(FP8_MAX, tl.maximum(tl.max(tl.abs(x), axis=1), 1e-12))  # (BLOCK_M,)
    q = (q.to(tl.int32, bitcast=True) & 0x7F800000).to(tl.float32, bitcast=True)  # its power of two
    x8 = tl.clamp(x * q[:, None], -FP8_MAX, FP8_MAX, propagate_nan=tl.PropagateNan.ALL)  # NaN stays NaN
    tl.store(X8 + rows[:, None] * N + cols[None, :], x8.to(X8.dtype.element_ty), mask=mask)
    tl.store(S + rows, tl.math.div_rn(1.0, q), mask=rows < M)

# Elements a program holds, and its warps: the fastest at the model's widths (`python bench.py --tune`).
TILE = (4096, 4)

def _fake_rowwise_fp8(x):
    return (torch.empty(x.shape, dtype=E4M3, device=x.device),
            torch.empty(x.shape[0], 1, dtype=torch.float32, device=x.device))

@for_compile("rowwise_fp8", _fake_rowwise_fp8)
def rowwise_fp8_fwd(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    if x.dim() != 2 or x.stride(1) != 1:
        raise ValueError(f"rowwise_fp8: x must be (M, N) with contiguous columns, got shape {tuple(x.shape)} "
                         f"strides {x.stride()}")
    M, N = x.shape
    if N == 0:
        raise ValueError("rowwise_fp8: rows of width 0 have no maximum to scale by")
    x8 = torch.empty(x.shape, dtype=E4M3, device=x.device)
    s = torch.empty(M, 1, dtype=torch.float32, device=x.device)
    if x8.numel() > 0:
        elements, num_warps = TILE
        BLOCK_N = next_power_of_2(N)
        BLOCK_M = max(1, elements // BLOCK_N)
        launch(_rowwise_fp8_kernel)[(cdiv(M, BLOCK_M),)](
            x, x8, s, M, N, x.stride(0), FP8_MAX=E4M3_MAX, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return x8, s

def rowwise_fp8(x, backend="auto"):
    """(x8, s): x (M, N) in e4m3 with one fp32 scale per row (see above), by the Triton kernel or PyTorch as
    `backend` says (kernels/backend.py). No gradient: the products that read it make their own."""
    limit = f"rows of {x.shape[-1]} are wider than {MAX_WIDTH}" if x.shape[-1] > MAX_WIDTH else None
    if not use_triton("rowwise_fp8", backend, x, limit=limit):
        return rowwise_fp8_ref(x)
    return rowwise_fp8_fwd(x)
