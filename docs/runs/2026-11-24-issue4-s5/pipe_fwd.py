"""Experiment (issue 4, session 5): the forward with FlashAttention-3's intra-warpgroup
overlap written by hand. Each step of the unmasked loop issues S = q k^T of the next key
tile before the softmax of this one, so the tensor cores work on S_{j+1} while the warps
do exp2 and the row sums of S_j (the wgmma is asynchronous until its first use, in the
next step). The last unmasked tile is peeled off the loop, so no tile is computed twice.
Not the kernel in use; the masked tiles and everything else are kernels/attention.py's."""
import triton
import triton.language as tl
from kernels.attention import _tile, _bthd, _fwd_tiles


@triton.jit
def _softmax_pv(acc, l_i, m_i, s, v, qk_scale):
    """One online-softmax step over the scores s of one key tile, values v."""
    m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
    p = tl.math.exp2(s * qk_scale - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
def _fwd_tiles_overlapped(acc, l_i, m_i, q, K, V, stride_kt, stride_vt, lo, hi, qk_scale,
                          HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    """The unmasked key tiles lo, lo + BLOCK_N, ... < hi (hi - lo a multiple of BLOCK_N)."""
    offs = tl.arange(0, BLOCK_N)
    if hi > lo:
        s = tl.dot(q, tl.trans(tl.load(K + _tile(lo + offs, stride_kt, HEAD_DIM))))
        for start_n in tl.range(lo, hi - BLOCK_N, BLOCK_N):
            s_next = tl.dot(q, tl.trans(tl.load(K + _tile(start_n + BLOCK_N + offs, stride_kt, HEAD_DIM))))
            v = tl.load(V + _tile(start_n + offs, stride_vt, HEAD_DIM))
            acc, l_i, m_i = _softmax_pv(acc, l_i, m_i, s, v, qk_scale)
            s = s_next
        v = tl.load(V + _tile(hi - BLOCK_N + offs, stride_vt, HEAD_DIM))
        acc, l_i, m_i = _softmax_pv(acc, l_i, m_i, s, v, qk_scale)
    return acc, l_i, m_i


@triton.jit(do_not_specialize=['B', 'T', 'T_BUCKET'])
def fwd_overlapped_kernel(
    Q, K, V, O, LSE,
    stride_qb, stride_qh, stride_qt, stride_kb, stride_kh, stride_kt, stride_vb, stride_vh, stride_vt,
    B, H, T, GROUP, scale, T_BUCKET,
    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    scale = tl.cast(scale, tl.float32)
    qk_scale = scale * 1.4426950408889634
    bh = tl.program_id(0)
    b, h = bh // H, bh % H
    start_m = (tl.num_programs(1) - 1 - tl.program_id(1)) * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    Q += b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
    K += b.to(tl.int64) * stride_kb + (h // GROUP).to(tl.int64) * stride_kh
    V += b.to(tl.int64) * stride_vb + (h // GROUP).to(tl.int64) * stride_vh
    q = tl.load(Q + _tile(offs_m, stride_qt, HEAD_DIM), mask=offs_m[:, None] < T, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    full = start_m if CAUSAL else T // BLOCK_N * BLOCK_N
    end = tl.minimum(start_m + BLOCK_M, T) if CAUSAL else T
    acc, l_i, m_i = _fwd_tiles_overlapped(acc, l_i, m_i, q, K, V, stride_kt, stride_vt, 0, full, qk_scale,
                                          HEAD_DIM, BLOCK_N)
    acc, l_i, m_i = _fwd_tiles(acc, l_i, m_i, q, K, V, stride_kt, stride_vt, offs_m, full, end, T, qk_scale,
                               CAUSAL, True, HEAD_DIM, BLOCK_N)
    rows = offs_m < T
    tl.store(LSE + bh.to(tl.int64) * T + offs_m, m_i + tl.math.log2(l_i), mask=rows)
    tl.store(O + _bthd(b, h, offs_m, T * H * HEAD_DIM, H * HEAD_DIM, HEAD_DIM), (acc / l_i[:, None]).to(O.dtype.element_ty),
             mask=rows[:, None])
