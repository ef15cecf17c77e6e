"""Experiment (issue 4, session 5): Triton 3.6's automatic warp specialization on Hopper
(tl.range(..., warp_specialize=True), num_warps=4: a producer warp group issuing TMA loads
and two consumer warp groups). What it takes to compile (offline sm_90a builds,
/tmp-only scripts): every load in the loop through a tensor descriptor, and one loop per
kernel (a second loop after it fails in MLIR's dominance check), so the causal mask is
applied on every tile. Causal only, one batch's rows of qkv (B, T, 3H, D) seen through a
(B*T, 3H*D) descriptor; rows past T belong to the next batch and are masked.
Not the kernels in use (kernels/attention.py)."""
import triton
import triton.language as tl


@triton.jit
def fwd_ws_kernel(desc_q, desc_k, desc_v, O, LSE, T, H, scale,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WS: tl.constexpr):
    bh = tl.program_id(0)
    b, h = bh // H, bh % H
    start_m = (tl.num_programs(1) - 1 - tl.program_id(1)) * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    qk_scale = scale * 1.4426950408889634
    row0 = b * T
    q = desc_q.load([row0 + start_m, h * HEAD_DIM])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in tl.range(0, tl.minimum(start_m + BLOCK_M, T), BLOCK_N, warp_specialize=WS):
        k = desc_k.load([row0 + start_n, (H + h) * HEAD_DIM])
        s = tl.dot(q, k.T)
        offs_n = start_n + tl.arange(0, BLOCK_N)
        s = tl.where((offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < T), s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = desc_v.load([row0 + start_n, (2 * H + h) * HEAD_DIM])
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    rows = offs_m < T
    tl.store(LSE + bh.to(tl.int64) * T + offs_m, m_i + tl.math.log2(l_i), mask=rows)
    o_ptrs = O + (b.to(tl.int64) * T + offs_m[:, None]) * (H * HEAD_DIM) + h * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    tl.store(o_ptrs, (acc / l_i[:, None]).to(O.dtype.element_ty), mask=rows[:, None])


@triton.jit
def dkdv_ws_kernel(desc_q, desc_k, desc_v, desc_do, desc_lse, desc_delta, DKV, T, H, scale,
                   HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WS: tl.constexpr):
    """desc_do over do (B, T, H, D) as (B*T, H*D); desc_lse, desc_delta over (B*H*T,); DKV (B, T, 2H, D)."""
    bh = tl.program_id(0)
    b, h = bh // H, bh % H
    start_n = tl.program_id(1) * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    row0 = b * T
    k = desc_k.load([row0 + start_n, (H + h) * HEAD_DIM])
    v = desc_v.load([row0 + start_n, (2 * H + h) * HEAD_DIM])
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    qk_scale = scale * 1.4426950408889634
    for start_m in tl.range(start_n, T, BLOCK_M, warp_specialize=WS):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        q = desc_q.load([row0 + start_m, h * HEAD_DIM])
        lse = desc_lse.load([bh * T + start_m])
        p_t = tl.math.exp2(tl.dot(k, q.T) * qk_scale - lse[None, :])
        p_t = tl.where((offs_m[None, :] >= offs_n[:, None]) & (offs_m[None, :] < T), p_t, 0.0)
        do = desc_do.load([row0 + start_m, h * HEAD_DIM])
        dv = tl.dot(p_t.to(do.dtype), do, dv)
        delta = desc_delta.load([bh * T + start_m])
        ds_t = p_t * (tl.dot(v, do.T) - delta[None, :])
        dk = tl.dot(ds_t.to(q.dtype), q, dk)
    d = tl.arange(0, HEAD_DIM)
    out = (b.to(tl.int64) * T + offs_n[:, None]) * (2 * H * HEAD_DIM) + d[None, :]
    tl.store(DKV + out + h * HEAD_DIM, (dk * scale).to(DKV.dtype.element_ty), mask=offs_n[:, None] < T)
    tl.store(DKV + out + (H + h) * HEAD_DIM, dv.to(DKV.dtype.element_ty), mask=offs_n[:, None] < T)


@triton.jit
def dq_ws_kernel(desc_q, desc_k, desc_v, desc_do, LSE, DELTA, DQ, T, H, scale,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WS: tl.constexpr):
    """delta given (not computed here); DQ (B, T, H, D)."""
    bh = tl.program_id(0)
    b, h = bh // H, bh % H
    start_m = (tl.num_programs(1) - 1 - tl.program_id(1)) * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    rows = offs_m < T
    row0 = b * T
    q = desc_q.load([row0 + start_m, h * HEAD_DIM])
    do = desc_do.load([row0 + start_m, h * HEAD_DIM])
    lse = tl.load(LSE + bh.to(tl.int64) * T + offs_m, mask=rows, other=float("inf"))
    delta = tl.load(DELTA + bh.to(tl.int64) * T + offs_m, mask=rows, other=0.0)
    qk_scale = scale * 1.4426950408889634
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in tl.range(0, tl.minimum(start_m + BLOCK_M, T), BLOCK_N, warp_specialize=WS):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = desc_k.load([row0 + start_n, (H + h) * HEAD_DIM])
        p = tl.math.exp2(tl.dot(q, k.T) * qk_scale - lse[:, None])
        p = tl.where((offs_m[:, None] >= offs_n[None, :]) & (offs_n[None, :] < T), p, 0.0)
        v = desc_v.load([row0 + start_n, (2 * H + h) * HEAD_DIM])
        ds = p * (tl.dot(do, v.T) - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    dq_ptrs = DQ + (b.to(tl.int64) * T + offs_m[:, None]) * (H * HEAD_DIM) + h * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    tl.store(dq_ptrs, (dq * scale).to(DQ.dtype.element_ty), mask=rows[:, None])
