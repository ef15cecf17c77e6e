"""
Linear + cross-entropy: the mean (or sum) over rows of -log softmax(z_i)[t_i] with
z = x W^T, without holding the (N, V) logits: the rows go through in chunks.

Per row i with target t_i (rows with t_i = ignore_index add nothing and are not counted),
logits z = x_i W^T (in x's dtype, as the matmul gives them; then fp32):
    softcap c (optional):  z <- c tanh(z / c)
    lse = log sum_j exp(z_j)                 (online: a running max and sum per segment of the row, fp32)
    loss_i = lse - z_t + z_loss * lse^2
    dloss_i/dz_j = softmax_j (1 + 2 z_loss lse) - [j = t]      (times 1 - tanh^2 with softcap)
    mean: loss = sum_i loss_i / n, n = rows not ignored (0 loss, zero grads when n = 0)
The gradients are made in the forward pass, chunk by chunk: the logits chunk becomes
its own gradient g, unscaled by the mean's 1 / n, in place (one Triton program per row:
a pass for lse, a pass writing g), then dx_chunk = g W and dW += g^T x_chunk (dW summed in
fp32; on the GPU each product by the fastest of cuBLASLt's algorithms and PyTorch's call, as
measured at the op's first call for these shapes, kernels/matmul.py). The backward only scales
dx and dW by the incoming gradient (over n for the mean): no second sweep over V.
Where no gradient is wanted (grad mode off, as in an evaluation, or neither x nor W requiring
one) the forward makes the loss alone: the chunks' logits products, not the dx and dW ones.
Peak extra memory: one buffer for a chunk of logits (at most chunk_bytes), the fp32 dW, dx,
a split-K product's workspace where cuBLASLt's fastest algorithm is one (12 MiB for GPT-2's
dx); under autocast also the weight's copy in x's dtype (as autocast's own cast would make),
and in the backward the scaled dW in the weight's dtype beside the saved fp32 one.
The chunk trades memory for time: each chunk's dW product reads and writes the whole fp32 dW,
a cost beside the chunk's own matmuls that shrinks as the chunk's rows grow, whatever V and H
are (docs/perf-notes.md). By default a chunk is 200 MiB of logits or 2048 rows, whichever is
larger: GPT-2's 12 x 1024 rows go in 6 chunks of 2048, and a vocabulary past 51200 words still
gets 2048 rows per chunk.

Constraints: x (..., H) and weight (V, H) of one dtype, fp32, bf16 or fp16 (under
autocast both are cast to its dtype first, as x @ W^T would be, and the weight's gradient
comes back in the weight's own dtype straight from the fp32 sum, where autocast's cast-back
would round it to autocast's dtype first); targets (...) integer, of any layout (made
contiguous for the kernel).
reduction 'mean' or 'sum' ('none' goes to PyTorch under backend='auto', one printed line).
A target outside [0, V) that is not ignore_index makes the loss NaN (F.cross_entropy
raises; checking on the host would stall the GPU every step).

Beside the op, unfused_cross_entropy: nanoGPT's unfused head and loss, the model's PyTorch path.
"""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from kernels.backend import triton, tl, use_triton, as_rows, for_compile, launch, INTERPRET, TRITON_AVAILABLE, cdiv
from kernels.matmul import matmul_plan

if TRITON_AVAILABLE:
    from triton.language.extra import libdevice

REDUCTIONS = ("mean", "sum")
CHUNK_BYTES = 200 * 2**20  # logits per chunk by default, or CHUNK_ROWS rows where those are more
CHUNK_ROWS = 2048

def linear_cross_entropy_ref(x, weight, targets, ignore_index=-1, reduction="mean", softcap=None, z_loss=0.0):
    """F.cross_entropy((x @ weight.T).float(), targets) with the options; mean over no rows is 0.
    float64 inputs stay float64 (the tests' reference)."""
    logits = x @ weight.T
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
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


def unfused_cross_entropy(x, weight, targets, ignore_index=-1):
    """nanoGPT's LM head and loss, what the model runs where the fused op is not chosen (the
    baselines): the (..., V) logits as F.linear makes them (bf16 under CUDA autocast), then
    F.cross_entropy on them, whose log-softmax sums in fp32 but writes the logits' dtype (CPU
    autocast casts them to fp32 first). Not the op: the op's reference casts the logits to fp32
    first, as the op is defined, which costs GPT-2's eager step more GPU time
    (docs/perf-notes.md). Rows all ignored give NaN here, as in nanoGPT."""
    logits = F.linear(x, weight)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=ignore_index)

@triton.jit
def _capped(z, softcap, SOFTCAP: tl.constexpr, LIBDEVICE: tl.constexpr):
    """softcap * tanh(z / softcap), or z. tl has no tanh: CUDA's libdevice one on the GPU;
    2 sigmoid(2u) - 1 in the CPU interpreter (exact there, but 4 ulps off in fp32 on the
    GPU near 0, with its fast exp and division)."""
    if SOFTCAP:
        if LIBDEVICE:
            return softcap * libdevice.tanh(z / softcap)
        else:
            return softcap * (2.0 * tl.sigmoid(2.0 * z / softcap) - 1.0)
    else:
        return z

@triton.jit
def _exp_minus(z, m, PRECISE: tl.constexpr, LIBDEVICE: tl.constexpr):
    """exp(z - m); PRECISE: ~1 ulp, by CUDA's libdevice exp on the GPU (its fast one is a few ulps off,
    which shows in an fp32 loss) and numpy's in the CPU interpreter; else exp2(z log2(e) - m log2(e)):
    one fused multiply-add and the hardware's exp2 per element, m's product made once per row or segment."""
    if PRECISE:
        if LIBDEVICE:
            return libdevice.exp(z - m)
        else:
            return tl.exp(z - m)
    else:
        return tl.exp2(z * 1.4426950408889634 - m * 1.4426950408889634)

@triton.jit
def _log(x, PRECISE: tl.constexpr, LIBDEVICE: tl.constexpr):
    if PRECISE and LIBDEVICE:
        return libdevice.log(x)
    else:
        return tl.log(x)

@triton.jit
def _cap_slope(z, softcap, SOFTCAP: tl.constexpr):
    """d(softcap tanh(u / softcap))/du = 1 - tanh^2, at the capped logit z; 1 without a cap."""
    if SOFTCAP:
        return 1.0 - (z / softcap) * (z / softcap)
    else:
        return 1.0

@triton.jit
def _grad(z, lse, scale, softcap, SOFTCAP: tl.constexpr, PRECISE: tl.constexpr, LIBDEVICE: tl.constexpr):
    """dloss/dz at a capped logit z, but for the target's -1: exp(z - lse) times scale
    (1 + 2 z_loss lse; 0 for an ignored row) times the cap's slope."""
    return _exp_minus(z, lse, PRECISE, LIBDEVICE) * scale * _cap_slope(z, softcap, SOFTCAP)

@triton.jit
def _linear_cross_entropy_fwd_kernel(
    LOGITS,   # (C, V) one chunk's logits, rows stride_row apart; overwritten with dloss/dlogits
    TARGETS,  # (C,) int targets of the chunk's rows
    LOSS,     # (C,) fp32 out: each row's loss, 0 for ignored rows
    V, stride_row, ignore_index, softcap, z_loss,
    SOFTCAP: tl.constexpr, LIBDEVICE: tl.constexpr, PRECISE: tl.constexpr, BLOCK_V: tl.constexpr,
    SEGMENT: tl.constexpr,
):
    """One row: a pass for its lse, a pass writing its gradient, unscaled (the mean's 1 / n
    is applied to dx and dW: an fp16 gradient of 50304 words divided by 12288 rows would be
    below fp16's smallest numbers). Few instructions per logit, or this memory-bound kernel
    becomes bound by them: a tile is (BLOCK_V / SEGMENT, SEGMENT), a segment per warp, and
    the first pass keeps a running max and sum per segment (one warp's shuffles per tile,
    no barrier, one exp per logit); the segments are combined once, at the end. The
    target's -1 is written once, after the pass, rather than tested for per logit."""
    softcap = tl.cast(softcap, tl.float32)  # torch.compile passes Python floats as fp64
    z_loss = tl.cast(z_loss, tl.float32)
    row = tl.program_id(0).to(tl.int64)
    target = tl.load(TARGETS + row).to(tl.int64)
    LOGITS += row * stride_row
    cols = tl.arange(0, BLOCK_V // SEGMENT)[:, None] * SEGMENT + tl.arange(0, SEGMENT)[None, :]
    m = tl.full([BLOCK_V // SEGMENT], float("-inf"), tl.float32)  # each segment's running max
    total = tl.zeros([BLOCK_V // SEGMENT, SEGMENT], tl.float32)   # and sum of exp(z - m)
    for start in tl.range(0, V, BLOCK_V):
        z = _capped(tl.load(LOGITS + start + cols, mask=start + cols < V, other=float("-inf")).to(tl.float32),
                    softcap, SOFTCAP, LIBDEVICE)
        if SOFTCAP:  # the cap would turn the padding's -inf into -softcap
            z = tl.where(start + cols < V, z, float("-inf"))
        m_new = tl.maximum(m, tl.max(z, 1))
        base = tl.where(m_new == float("-inf"), 0.0, m_new)  # a segment all past V so far: exp(-inf - 0) = 0
        total = (total * _exp_minus(m, base, PRECISE, LIBDEVICE)[:, None]
                 + _exp_minus(z, base[:, None], PRECISE, LIBDEVICE))
        m = m_new
    m_row = tl.max(m, 0)
    lse = m_row + _log(tl.sum(tl.sum(total, 1) * _exp_minus(m, m_row, PRECISE, LIBDEVICE), 0), PRECISE, LIBDEVICE)
    valid = target != ignore_index
    in_range = (target >= 0) & (target < V)
    z_target = _capped(tl.load(LOGITS + target, mask=valid & in_range, other=0.0).to(tl.float32),
                       softcap, SOFTCAP, LIBDEVICE)
    loss = tl.where(valid, lse - z_target + z_loss * lse * lse, 0.0)
    tl.store(LOSS + row, tl.where(valid & ~in_range, float("nan"), loss))  # loud, without a host sync
    scale = tl.where(valid, 1.0 + 2.0 * z_loss * lse, 0.0)  # an ignored row's gradient is 0
    for start in tl.range(0, V, BLOCK_V):
        z = _capped(tl.load(LOGITS + start + cols, mask=start + cols < V, other=0.0).to(tl.float32),
                    softcap, SOFTCAP, LIBDEVICE)
        g = _grad(z, lse, scale, softcap, SOFTCAP, PRECISE, LIBDEVICE)
        tl.store(LOGITS + start + cols, g.to(LOGITS.dtype.element_ty), mask=start + cols < V)
    tl.debug_barrier()  # the other threads' stores of the row land before the target's, which replaces one
    g_target = (_exp_minus(z_target, lse, PRECISE, LIBDEVICE) * scale - 1.0) * _cap_slope(z_target, softcap, SOFTCAP)
    tl.store(LOGITS + target, g_target.to(LOGITS.dtype.element_ty), mask=valid & in_range)

@triton.jit
def _linear_cross_entropy_bwd_kernel(
    GRAD,   # (n,) contiguous: dx or dW as the forward made them, unscaled
    SCALE,  # () fp32: dloss / n (a tensor: no host sync)
    OUT,    # (n,) out: GRAD * SCALE in OUT's dtype, rounded once
    n, BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    grad = tl.load(GRAD + offs, mask=offs < n).to(tl.float32)
    tl.store(OUT + offs, (grad * tl.load(SCALE)).to(OUT.dtype.element_ty), mask=offs < n)

# a row in tiles (the tests' cross a few, and segments past V); a segment is a warp's 32 lanes x 8 bf16, and
# 32 warps hold a tile's 32 segments (measured faster than 16 warps at GPT-2's shapes: docs/perf-notes.md)
BLOCK_V, SEGMENT, NUM_WARPS = (256, 64, 4) if INTERPRET else (8192, 256, 32)
SCALE_BLOCK = 4096

def _chunk_rows(N, V, itemsize, chunk_bytes):
    """Rows per chunk: at most chunk_bytes of logits, a multiple of 8 rows (the matmuls' row
    blocks), the N rows cut into chunks of about equal size (no small last one)."""
    most = max(8, chunk_bytes // (V * itemsize) // 8 * 8)
    per_chunk = cdiv(N, max(1, cdiv(N, most)))
    return max(8, cdiv(per_chunk, 8) * 8)

def chunk_bytes_for(V, itemsize, least_bytes, least_rows):
    """A chunk of logits of least_bytes, or of least_rows rows of V words where those are more
    (the op's default: chunk_bytes_for(V, itemsize, CHUNK_BYTES, CHUNK_ROWS))."""
    return max(least_bytes, least_rows * V * itemsize)

def model_chunk_bytes(V, lean):
    """The chunk a GPT's loss uses: the op's default where memory is asked for (lean: recompute), else twice it,
    in bf16 logits: fewer chunks are faster (each one's dW product reads and writes the whole fp32 dW)."""
    return None if lean else chunk_bytes_for(V, 2, 2 * CHUNK_BYTES, 2 * CHUNK_ROWS)

def _chunk_products(x, weight, logits, dx, dweight, rows):
    """{(chunk rows, first chunk?): the chunk's product plans (logits = x W^T, dx = g W, dW = g^T x for the first
    chunk, dW += g^T x after it; the logits' alone where dx is None)}, made before the buffers hold anything:
    measuring a plan writes its output."""
    N, plans = x.shape[0], {}
    for start in (0, rows, (N - 1) // rows * rows):  # the first chunk, the second, the last (maybe shorter)
        key = (min(rows, N - start), start == 0)
        if 0 <= start < N and key not in plans:
            x_chunk, g = x[start:start + rows], logits[:key[0]]
            plans[key] = (matmul_plan(x_chunk, weight.T, g),) + (() if dx is None else (
                matmul_plan(g, weight, dx[start:start + rows]),
                matmul_plan(g.T, x_chunk, dweight, beta=0.0 if start == 0 else 1.0)))
    return plans

def _gradients(x, weight, grads):
    """dx and the fp32 dW for the forward to write, or rows of neither where no gradient is wanted."""
    return (x.new_empty(x.shape if grads else (0, x.shape[1])),
            weight.new_empty(weight.shape if grads else (0, weight.shape[1]), dtype=torch.float32))

def _fake_fwd(x, weight, targets, ignore_index, softcap, z_loss, chunk_bytes, grads):
    return x.new_empty((), dtype=torch.float64), *_gradients(x, weight, grads), targets.new_empty(())

# opaque to torch.compile: traced, its fp32-output addmm fails in the fake-tensor pass (torch 2.11)
@for_compile("linear_cross_entropy_fwd", _fake_fwd, traceable=False)
def linear_cross_entropy_fwd(x: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, ignore_index: int,
                             softcap: Optional[float], z_loss: float, chunk_bytes: int,
                             grads: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(summed loss in fp64, its gradients for x and, in fp32, for weight, rows not ignored)
    for x (N, H), weight (V, H), targets (N,), the rows in chunks of at most chunk_bytes of logits;
    without grads the gradients are empty (no rows) and their products not made."""
    if x.dim() != 2 or weight.dim() != 2 or x.shape[1] != weight.shape[1] or targets.shape != x.shape[:1]:
        raise ValueError(f"linear_cross_entropy: shapes x {tuple(x.shape)}, weight {tuple(weight.shape)}, "
                         f"targets {tuple(targets.shape)} are not (N, H), (V, H), (N,)")
    if x.dtype != weight.dtype:
        raise ValueError(f"linear_cross_entropy: x is {x.dtype}, weight {weight.dtype}")
    if not targets.is_contiguous():  # the kernel reads row r's target at targets + r
        raise ValueError(f"linear_cross_entropy: targets must be contiguous, got strides {targets.stride()}")
    N, V = x.shape[0], weight.shape[0]
    loss_rows = torch.empty(N, device=x.device, dtype=torch.float32)
    dx, dweight = _gradients(x, weight, grads)
    if N == 0:  # no chunk writes it
        dweight.zero_()
    rows = _chunk_rows(N, V, x.element_size(), chunk_bytes)
    logits = torch.empty(min(rows, N), V, device=x.device, dtype=x.dtype)  # one buffer: the chunks take turns
    plans = _chunk_products(x, weight, logits, dx if grads else None, dweight, rows)
    for start in range(0, N, rows):
        x_chunk = x[start:start + rows]
        logits_of, *grads_of = plans[x_chunk.shape[0], start == 0]
        g = logits_of(x_chunk, weight.T, logits[:x_chunk.shape[0]])  # (C, V) logits, then their gradient in place
        launch(_linear_cross_entropy_fwd_kernel)[(g.shape[0],)](
            g, targets[start:start + rows], loss_rows[start:start + rows], V, g.stride(0), ignore_index,
            1.0 if softcap is None else softcap, z_loss, SOFTCAP=softcap is not None, LIBDEVICE=not INTERPRET,
            PRECISE=x.dtype == torch.float32, BLOCK_V=BLOCK_V, SEGMENT=SEGMENT,
            num_warps=NUM_WARPS)
        if grads:
            dx_of, dweight_of = grads_of
            dx_of(g, weight, dx[start:start + rows])
            dweight_of(g.T, x_chunk, dweight)  # summed in fp32
    # in fp64: an fp32 sum of many rows rounds off the loss's last digits
    return loss_rows.sum(dtype=torch.float64), dx, dweight, (targets != ignore_index).sum()

def _fake_bwd(dx, dweight, scale, weight_dtype):
    return torch.empty_like(dx), torch.empty_like(dweight, dtype=weight_dtype)

@for_compile("linear_cross_entropy_bwd", _fake_bwd)
def linear_cross_entropy_bwd(dx: torch.Tensor, dweight: torch.Tensor, scale: torch.Tensor,
                             weight_dtype: torch.dtype) -> Tuple[torch.Tensor, torch.Tensor]:
    """dx and dW (fp32) from the forward times scale (0-d fp32), dW in the weight's dtype:
    one pass over each (torch's mul into another dtype takes a slow, unvectorized path)."""
    if scale.numel() != 1 or scale.dtype != torch.float32 or not (dx.is_contiguous() and dweight.is_contiguous()):
        raise ValueError("linear_cross_entropy_bwd: a 0-d fp32 scale and contiguous gradients, please")
    outs = torch.empty_like(dx), torch.empty_like(dweight, dtype=weight_dtype)
    for grad, out in zip((dx, dweight), outs):
        launch(_linear_cross_entropy_bwd_kernel)[(cdiv(grad.numel(), SCALE_BLOCK),)](
            grad, scale, out, grad.numel(), BLOCK=SCALE_BLOCK)
    return outs

class LinearCrossEntropyFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, weight, targets, ignore_index, mean, softcap, z_loss, chunk_bytes, grads):
        # the weight in x's dtype here, not by autograd: its gradient then goes back from the fp32
        # sum to the weight's own dtype in one pass, never rounded to x's dtype and cast back
        loss, dx, dweight, n_valid = linear_cross_entropy_fwd(x, weight.to(x.dtype), targets, ignore_index, softcap,
                                                              z_loss, chunk_bytes, grads)
        count = n_valid.clamp(min=1) if mean else torch.ones_like(n_valid)  # mean over no rows: 0, not nan
        ctx.save_for_backward(dx, dweight, count)
        ctx.weight_dtype = weight.dtype
        return (loss / count).float()

    @staticmethod
    def backward(ctx, dloss):
        dx, dweight, count = ctx.saved_tensors
        dx, dweight = linear_cross_entropy_bwd(dx, dweight, (dloss / count).float(), ctx.weight_dtype)
        return dx, dweight, None, None, None, None, None, None, None

def linear_cross_entropy(x, weight, targets, ignore_index=-1, reduction="mean", softcap=None, z_loss=0.0,
                         chunk_bytes=None, backend="auto"):
    """F.cross_entropy((x @ weight.T).float(), targets, ignore_index=ignore_index,
    reduction=reduction), plus the optional logit softcap and z-loss, without the (N, V)
    logits (the kernel holds at most chunk_bytes of them at a time; None: CHUNK_BYTES or
    CHUNK_ROWS rows, whichever is larger); by the Triton kernel or PyTorch as `backend` says
    (see kernels/backend.py)."""
    if torch.is_autocast_enabled(x.device.type):  # the weight: cast inside the Function (the kernel) or below (PyTorch)
        x = x.to(torch.get_autocast_dtype(x.device.type))
    elif x.dtype != weight.dtype:
        raise ValueError(f"linear_cross_entropy: x is {x.dtype}, weight {weight.dtype}")
    limit = None if reduction in REDUCTIONS else f"reduction={reduction!r} is not in the kernel"
    if not use_triton("linear_cross_entropy", backend, x, weight, limit=limit):
        with torch.autocast(x.device.type, enabled=False):
            return linear_cross_entropy_ref(x, weight.to(x.dtype), targets, ignore_index, reduction, softcap, z_loss)
    if chunk_bytes is None:
        chunk_bytes = chunk_bytes_for(weight.shape[0], x.element_size(), CHUNK_BYTES, CHUNK_ROWS)
    grads = torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad)
    with torch.autocast(x.device.type, enabled=False):  # the chunk matmuls write into given outputs
        return LinearCrossEntropyFunction.apply(as_rows(x), weight, targets.reshape(-1).contiguous(), ignore_index,
                                                reduction == "mean", softcap, z_loss, int(chunk_bytes), grads)
