# The segment row kernel with the next tile's load issued before the current tile's math
# (both passes): a copy of kernels/linear_cross_entropy.py's kernel, for timing only.
import triton
import triton.language as tl
from kernels.linear_cross_entropy import _capped, _exp_minus, _log, _grad, _cap_slope

@triton.jit
def _prefetch_kernel(
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
    z_next = tl.load(LOGITS + cols, mask=cols < V, other=float("-inf"))
    for start in tl.range(0, V, BLOCK_V):
        z = _capped(z_next.to(tl.float32), softcap, SOFTCAP, LIBDEVICE)
        z_next = tl.load(LOGITS + start + BLOCK_V + cols, mask=start + BLOCK_V + cols < V, other=float("-inf"))
        if SOFTCAP:  # the cap would turn the padding's -inf into -softcap
            z = tl.where(start + cols < V, z, float("-inf"))
        m_new = tl.maximum(m, tl.max(z, 1))
        base = tl.where(m_new == float("-inf"), 0.0, m_new)  # a segment all past V so far: exp(-inf - 0) = 0
        total = total * _exp_minus(m, base, PRECISE)[:, None] + _exp_minus(z, base[:, None], PRECISE)
        m = m_new
    m_row = tl.max(m, 0)
    lse = m_row + _log(tl.sum(tl.sum(total, 1) * _exp_minus(m, m_row, PRECISE), 0), PRECISE)
    valid = target != ignore_index
    in_range = (target >= 0) & (target < V)
    z_target = _capped(tl.load(LOGITS + target, mask=valid & in_range, other=0.0).to(tl.float32),
                       softcap, SOFTCAP, LIBDEVICE)
    loss = tl.where(valid, lse - z_target + z_loss * lse * lse, 0.0)
    tl.store(LOSS + row, tl.where(valid & ~in_range, float("nan"), loss))  # loud, without a host sync
    scale = tl.where(valid, 1.0 + 2.0 * z_loss * lse, 0.0)  # an ignored row's gradient is 0
    z_next = tl.load(LOGITS + cols, mask=cols < V, other=0.0)
    for start in tl.range(0, V, BLOCK_V):
        z = _capped(z_next.to(tl.float32), softcap, SOFTCAP, LIBDEVICE)
        z_next = tl.load(LOGITS + start + BLOCK_V + cols, mask=start + BLOCK_V + cols < V, other=0.0)
        tl.store(LOGITS + start + cols, _grad(z, lse, scale, softcap, SOFTCAP, PRECISE).to(LOGITS.dtype.element_ty),
                 mask=start + cols < V)
    tl.debug_barrier()  # the other threads' stores of the row land before the target's, which replaces one
    g_target = (_exp_minus(z_target, lse, PRECISE) * scale - 1.0) * _cap_slope(z_target, softcap, SOFTCAP)
    tl.store(LOGITS + target, g_target.to(LOGITS.dtype.element_ty), mask=valid & in_range)

