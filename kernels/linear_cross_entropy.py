"""
Linear + cross-entropy: the mean (or sum) over rows of -log softmax(z_i)[t_i] with
z = x W^T, without holding the (N, V) logits: the rows go through in chunks.

Per row i with target t_i (rows with t_i = ignore_index add nothing and are not counted),
logits z = x_i W^T (in x's dtype, as the matmul gives them; then fp32):
    softcap c (optional):  z <- c tanh(z / c)
    lse = log sum_j exp(z_j)                        (online: running max and sum, fp32)
    loss_i = lse - z_t + z_loss * lse^2
    dloss_i/dz_j = softmax_j (1 + 2 z_loss lse) - [j = t]      (times 1 - tanh^2 with softcap)
    mean: loss = sum_i loss_i / n, n = rows not ignored (0 loss, zero grads when n = 0)
The gradients are made in the forward pass, chunk by chunk: the logits chunk becomes
its own gradient g in place (one Triton program per row: a pass for lse, a pass writing
g), then dx_chunk = g W and dW += g^T x_chunk (cuBLAS; dW summed in fp32). The
backward only scales dx and dW by the incoming gradient: no second sweep over V.
Peak extra memory: one chunk of logits (CHUNK_BYTES) and the fp32 dW.

Constraints: x (..., H) and weight (V, H) of one dtype, fp32, bf16 or fp16 (under
autocast both are cast to its dtype first, as x @ W^T would be); targets (...) integer.
reduction 'mean' or 'sum' ('none' goes to PyTorch under backend='auto', one printed line).
A target outside [0, V) that is not ignore_index makes the loss NaN (F.cross_entropy
raises; checking on the host would stall the GPU every step).
"""
import math
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch.library import wrap_triton

from kernels.backend import triton, tl, use_triton, for_compile, INTERPRET

REDUCTIONS = ("mean", "sum")
CHUNK_BYTES = 128 * 2**20  # one chunk of logits; GPT-2's 50304-word vocabulary in bf16: 1334 rows

def linear_cross_entropy_ref(x, weight, targets, ignore_index=-1, reduction="mean", softcap=None, z_loss=0.0):
    """F.cross_entropy((x @ weight.T).float(), targets) with the options; mean over no rows is 0."""
    logits = (x @ weight.T).float()
    logits = logits.reshape(-1, logits.shape[-1])
    targets = targets.reshape(-1)
    if softcap is not None:
        logits = softcap * torch.tanh(logits / softcap)
    loss = F.cross_entropy(logits, targets, ignore_index=ignore_index, reduction="none")
    valid = targets != ignore_index
    if z_loss:
        loss = loss + z_loss * torch.logsumexp(logits, -1).square() * valid
    if reduction == "none":
        return loss.reshape(x.shape[:-1])
    return loss.sum() if reduction == "sum" else loss.sum() / valid.sum().clamp(min=1)

@triton.jit
def _capped(z, softcap, SOFTCAP: tl.constexpr):
    """softcap * tanh(z / softcap), or z."""
    if SOFTCAP:
        return softcap * (2.0 * tl.sigmoid(2.0 * z / softcap) - 1.0)  # tl has no tanh
    else:
        return z

@triton.jit
def _linear_cross_entropy_fwd_kernel(
    LOGITS,   # (C, V) one chunk's logits, rows stride_row apart; overwritten with dloss/dlogits
    TARGETS,  # (C,) int targets of the chunk's rows
    LOSS,     # (C,) fp32 out: each row's loss, 0 for ignored rows
    N_VALID,  # (1,) int rows not ignored in the whole batch (device tensor: no host sync)
    V, stride_row, ignore_index, softcap, z_loss,
    MEAN: tl.constexpr, SOFTCAP: tl.constexpr, BLOCK_V: tl.constexpr,
):
    """One row: a pass for its lse (running max and sum per lane), a pass writing its gradient."""
    softcap = tl.cast(softcap, tl.float32)  # torch.compile passes Python floats as fp64
    z_loss = tl.cast(z_loss, tl.float32)
    row = tl.program_id(0).to(tl.int64)
    target = tl.load(TARGETS + row).to(tl.int64)
    LOGITS += row * stride_row
    cols = tl.arange(0, BLOCK_V)
    m = tl.full([BLOCK_V], float("-inf"), tl.float32)
    total = tl.zeros([BLOCK_V], tl.float32)
    z_target = tl.zeros([BLOCK_V], tl.float32)
    for start in tl.range(0, V, BLOCK_V):
        in_row = start + cols < V
        z = _capped(tl.load(LOGITS + start + cols, mask=in_row, other=0.0).to(tl.float32), softcap, SOFTCAP)
        z = tl.where(in_row, z, float("-inf"))
        m_new = tl.maximum(m, z)
        # lanes still at -inf (past V) keep a sum of 0 rather than exp(-inf - -inf) = nan
        total = tl.where(m_new == float("-inf"), 0.0, total * tl.exp(m - m_new) + tl.exp(z - m_new))
        m = m_new
        z_target += tl.where(start + cols == target, z, 0.0)
    m_row = tl.max(m, 0)
    lse = m_row + tl.log(tl.sum(total * tl.exp(m - m_row), 0))
    valid = target != ignore_index
    loss = tl.where(valid, lse - tl.sum(z_target, 0) + z_loss * lse * lse, 0.0)
    out_of_range = valid & ((target < 0) | (target >= V))
    tl.store(LOSS + row, tl.where(out_of_range, float("nan"), loss))  # loud, without a host sync
    if MEAN:
        scale = 1.0 / tl.maximum(tl.load(N_VALID), 1).to(tl.float32)
    else:
        scale = 1.0
    scale = tl.where(valid, scale, 0.0)
    for start in tl.range(0, V, BLOCK_V):
        in_row = start + cols < V
        z = _capped(tl.load(LOGITS + start + cols, mask=in_row, other=0.0).to(tl.float32), softcap, SOFTCAP)
        g = tl.exp(z - lse) * (1.0 + 2.0 * z_loss * lse) - tl.where(start + cols == target, 1.0, 0.0)
        if SOFTCAP:
            g = g * (1.0 - (z / softcap) * (z / softcap))  # d(softcap tanh(u / softcap))/du = 1 - tanh^2
        tl.store(LOGITS + start + cols, (g * scale).to(LOGITS.dtype.element_ty), mask=in_row)

BLOCK_V, NUM_WARPS = (256, 4) if INTERPRET else (4096, 8)  # a row in tiles (the tests' cross a few)

def _chunk_rows(V, itemsize):
    """Rows per chunk: CHUNK_BYTES of logits, a multiple of 8 rows (the matmuls' row blocks)."""
    return max(8, CHUNK_BYTES // (V * itemsize) // 8 * 8)

def _fake_fwd(x, weight, targets, ignore_index, mean, softcap, z_loss):
    return (x.new_empty((), dtype=torch.float32), torch.empty_like(x),
            weight.new_empty(weight.shape, dtype=torch.float32))

@for_compile("linear_cross_entropy_fwd", _fake_fwd)
def linear_cross_entropy_fwd(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, ignore_index: int,
                             mean: bool, softcap: Optional[float],
                             z_loss: float) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss, dloss/dx, dloss/dweight in fp32) for x (N, H), weight (V, H), targets (N,)."""
    if x.dim() != 2 or weight.dim() != 2 or x.shape[1] != weight.shape[1] or targets.shape != x.shape[:1]:
        raise ValueError(f"linear_cross_entropy: shapes x {tuple(x.shape)}, weight {tuple(weight.shape)}, "
                         f"targets {tuple(targets.shape)} are not (N, H), (V, H), (N,)")
    if x.dtype != weight.dtype:
        raise ValueError(f"linear_cross_entropy: x is {x.dtype}, weight {weight.dtype}")
    N, V = x.shape[0], weight.shape[0]
    n_valid = (targets != ignore_index).sum().reshape(1)
    loss_rows = torch.empty(N, device=x.device, dtype=torch.float32)
    dx = torch.empty_like(x)
    dweight = torch.zeros(weight.shape, device=x.device, dtype=torch.float32)
    rows = _chunk_rows(V, x.element_size())
    for start in range(0, N, rows):
        x_chunk = x[start:start + rows]
        g = x_chunk @ weight.T  # (C, V) logits, then their gradient in place
        wrap_triton(_linear_cross_entropy_fwd_kernel)[(g.shape[0],)](
            g, targets[start:start + rows], loss_rows[start:start + rows], n_valid, V, g.stride(0), ignore_index,
            1.0 if softcap is None else softcap, z_loss, MEAN=mean, SOFTCAP=softcap is not None,
            BLOCK_V=BLOCK_V, num_warps=NUM_WARPS)
        torch.mm(g, weight, out=dx[start:start + rows])
        if x.is_cuda and x.dtype != torch.float32:  # bf16 products summed into fp32 by cuBLAS
            torch.addmm(dweight, g.T, x_chunk, out_dtype=torch.float32, out=dweight)
        else:
            dweight.addmm_(g.T.float(), x_chunk.float())
    loss = loss_rows.sum(dtype=torch.float64)  # an fp32 sum of many rows rounds off the loss's last digits
    return (loss / n_valid.clamp(min=1).squeeze(0) if mean else loss).float(), dx, dweight

class LinearCrossEntropyFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, weight, targets, ignore_index, mean, softcap, z_loss):
        loss, dx, dweight = linear_cross_entropy_fwd(x, weight, targets, ignore_index, mean, softcap, z_loss)
        ctx.save_for_backward(dx, dweight)
        ctx.weight_dtype = weight.dtype
        return loss

    @staticmethod
    def backward(ctx, dloss):
        dx, dweight = ctx.saved_tensors
        return dx * dloss.to(dx.dtype), (dweight * dloss).to(ctx.weight_dtype), None, None, None, None, None

def linear_cross_entropy(x, weight, targets, ignore_index=-1, reduction="mean", softcap=None, z_loss=0.0,
                         backend="auto"):
    """F.cross_entropy((x @ weight.T).float(), targets, ignore_index=ignore_index,
    reduction=reduction), plus the optional logit softcap and z-loss, without the (N, V)
    logits; by the Triton kernel or PyTorch as `backend` says (see kernels/backend.py)."""
    if torch.is_autocast_enabled(x.device.type):
        dtype = torch.get_autocast_dtype(x.device.type)
        x, weight = x.to(dtype), weight.to(dtype)
    limit = None if reduction in REDUCTIONS else f"reduction={reduction!r} is not in the kernel"
    if not use_triton("linear_cross_entropy", backend, x, weight, limit=limit):
        with torch.autocast(x.device.type, enabled=False):
            return linear_cross_entropy_ref(x, weight, targets, ignore_index, reduction, softcap, z_loss)
    x2 = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    with torch.autocast(x.device.type, enabled=False):  # the chunk matmuls write into given outputs
        return LinearCrossEntropyFunction.apply(x2, weight, targets.reshape(-1), ignore_index,
                                                reduction == "mean", softcap, z_loss)
