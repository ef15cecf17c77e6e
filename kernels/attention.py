"""
Flash attention: softmax(scale * Q K^T) V over tiles, never the T x T matrix.

Shapes as F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale,
enable_gqa=True): q (B, H, T, D), k and v (B, Hkv, T, D), H a multiple of Hkv; query
head h reads key/value head h // (H / Hkv) in place (nothing repeated). Causal: query i
sees keys j <= i. flash_attention_qkv takes q, k, v as one (B, T, H + 2 Hkv, D) projection
and returns that projection's gradient as one tensor (the kernels write dq, dk, dv into it).

Forward, per tile of BLOCK_M query rows, walking key tiles of BLOCK_N (online softmax):
    s = scale * q k^T                     (fp32, in log2 units: scale * log2(e))
    m' = max(m, rowmax(s)),  p = exp2(s - m'),  l = l * exp2(m - m') + rowsum(p)
    acc = acc * exp2(m - m') + p v        (p rounded to v's dtype for the tensor cores)
    o = acc / l,  lse = m + log2(l)       (lse saved: one fp32 per row, O(T) memory)
Backward, with P = exp2(s - lse) recomputed tile by tile from the saved lse:
    delta_i = sum_d o_id do_id            (by the dQ kernel, which runs first)
    dV = P^T dO,  dP = dO V^T,  dS = P * (dP - delta),  dQ = scale dS K,  dK = scale dS^T Q
dK and dV: one program per key tile, walking every query tile (and, for GQA, every
query head of its group) with fp32 sums in registers; dQ: one program per query tile,
walking the key tiles. No atomics: the same bits on every run. Tiles that the causal
diagonal or the end of the sequence cut are the only ones masked (MASKED).

Constraints: q, k, v of one dtype, bf16 or fp16; fp32, dropout and head dims outside
HEAD_DIMS go to SDPA with backend='auto', one printed line (exact fp32 tiles fall short
of SDPA's fp32 accuracy in dv on the GPU: docs/perf-notes.md). Any T; any strides with
contiguous head dims (the model's q, k, v are read in place from the qkv projection). The output is returned
as a (B, H, T, D) view of a (B, T, H, D) tensor, the layout the output projection reads.
Block sizes, warps and stages are autotuned per head dim, causal, dtype, batch size,
head count, GQA ratio and power-of-two bucket of T; the choice is cached for the process
(and on disk, Triton's cache_results).
"""
import os
import math
from typing import Tuple

import torch
import torch.nn.functional as F

from kernels.backend import (triton, tl, use_triton, for_compile, launch, cdiv, next_power_of_2, INTERPRET,
                             TRITON_AVAILABLE)

HEAD_DIMS = (16, 32, 64, 128)

def flash_attention_ref(q, k, v, causal=True, scale=None, dropout_p=0.0):
    """PyTorch's fused attention with the same arguments."""
    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=causal, scale=scale,
                                          enable_gqa=q.shape[1] != k.shape[1])

@triton.jit
def _tile(offs_t, stride_t, HEAD_DIM: tl.constexpr):
    """Offsets of rows offs_t (stride_t apart, head dim contiguous) of one head: a (rows, D) tile."""
    return offs_t[:, None] * stride_t + tl.arange(0, HEAD_DIM)[None, :]

@triton.jit
def _bthd(b, h, offs_t, stride_b, stride_t, HEAD_DIM: tl.constexpr):
    """Offsets (int64 across batches) of rows offs_t of head h, batch b, in a (B, T, heads, D)
    tensor whose heads lie side by side (head stride D): o (B, T, H, D); dq, dk, dv apart, or
    one (B, T, H + 2 Hkv, D) gradient of a packed qkv projection."""
    return b.to(tl.int64) * stride_b + h * HEAD_DIM + _tile(offs_t, stride_t, HEAD_DIM)

@triton.jit
def _fwd_tiles(acc, l_i, m_i, q, K, V, stride_kt, stride_vt, offs_m, lo, hi, T, qk_scale,
               CAUSAL: tl.constexpr, MASKED: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    """Online softmax over the key tiles starting at lo, lo + BLOCK_N, ... < hi."""
    for start_n in tl.range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        in_seq = offs_n[:, None] < T
        k = tl.load(K + _tile(offs_n, stride_kt, HEAD_DIM), mask=in_seq if MASKED else None)
        s = tl.dot(q, tl.trans(k))
        if MASKED:
            keep = offs_n[None, :] < T
            if CAUSAL:
                keep = keep & (offs_m[:, None] >= offs_n[None, :])
            s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + _tile(offs_n, stride_vt, HEAD_DIM), mask=in_seq if MASKED else None)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i

@triton.jit(do_not_specialize=['B', 'T', 'T_BUCKET'])  # one compile for every B and T
def _flash_attention_fwd_kernel(
    Q,       # (B, H, T, D) queries, strides stride_q*, head dim contiguous
    K,       # (B, Hkv, T, D) keys, strides stride_k*
    V,       # (B, Hkv, T, D) values, strides stride_v*
    O,       # (B, T, H, D) output, contiguous
    LSE,     # (B, H, T) fp32 log2-sum-exp2 of each query row's scaled scores, for the backward
    stride_qb, stride_qh, stride_qt, stride_kb, stride_kh, stride_kt, stride_vb, stride_vh, stride_vt,
    B, H, T, GROUP, scale,  # GROUP = H / Hkv; scale multiplies q k^T
    T_BUCKET,  # next power of two of T: with B and H, the autotuning key, not read
    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    scale = tl.cast(scale, tl.float32)  # torch.compile passes Python floats as fp64
    qk_scale = scale * 1.4426950408889634  # log2(e): scores in log2 units, for exp2
    bh = tl.program_id(0)
    b, h = bh // H, bh % H
    # the longest causal rows first, so the short ones fill the tail of the launch
    start_m = (tl.num_programs(1) - 1 - tl.program_id(1)) * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    Q += b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
    K += b.to(tl.int64) * stride_kb + (h // GROUP).to(tl.int64) * stride_kh
    V += b.to(tl.int64) * stride_vb + (h // GROUP).to(tl.int64) * stride_vh
    q = tl.load(Q + _tile(offs_m, stride_qt, HEAD_DIM), mask=offs_m[:, None] < T, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    # key tiles wholly visible to every row of this tile, then the few the diagonal or T cut
    full = start_m if CAUSAL else T // BLOCK_N * BLOCK_N
    end = tl.minimum(start_m + BLOCK_M, T) if CAUSAL else T
    acc, l_i, m_i = _fwd_tiles(acc, l_i, m_i, q, K, V, stride_kt, stride_vt, offs_m, 0, full, T, qk_scale,
                               CAUSAL, False, HEAD_DIM, BLOCK_N)
    acc, l_i, m_i = _fwd_tiles(acc, l_i, m_i, q, K, V, stride_kt, stride_vt, offs_m, full, end, T, qk_scale,
                               CAUSAL, True, HEAD_DIM, BLOCK_N)

    rows = offs_m < T
    tl.store(LSE + bh.to(tl.int64) * T + offs_m, m_i + tl.math.log2(l_i), mask=rows)
    tl.store(O + _bthd(b, h, offs_m, T * H * HEAD_DIM, H * HEAD_DIM, HEAD_DIM),
             (acc / l_i[:, None]).to(O.dtype.element_ty), mask=rows[:, None])

@triton.jit
def _load_rows(ptrs, rows, other, MASKED: tl.constexpr):
    """tl.load, masked by rows (other past them) only if MASKED: the masks cost issue slots."""
    if MASKED:
        return tl.load(ptrs, mask=rows, other=other)
    else:
        return tl.load(ptrs)

@triton.jit
def _dkdv_tiles(dk, dv, k, v, Q, DO, LSE, DELTA, hkv, GROUP: tl.constexpr, T, stride_qh, stride_qt, stride_doh,
                stride_dot, offs_n, lo, hi, qk_scale, CAUSAL: tl.constexpr, MASKED: tl.constexpr,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    """dK and dV sums of one key tile over the query tiles at lo, lo + BLOCK_M, ... < hi of
    each query head of its group, in one flat loop over (head, tile): a loop over heads
    around the tile loop spills registers. Q, DO, LSE, DELTA point at the batch's first
    head. MASKED: rows past T load as zeros and add nothing, and the causal diagonal is
    masked; otherwise every tile lies wholly inside the sequence and below the diagonal."""
    tiles = tl.cdiv(hi - lo, BLOCK_M)
    for i in tl.range(0, GROUP * tiles):
        g, tile = (i // tiles, i % tiles) if GROUP > 1 else (0, i)  # no division per step without GQA
        h = (hkv * GROUP + g).to(tl.int64)
        offs_m = lo + tile * BLOCK_M + tl.arange(0, BLOCK_M)
        rows = offs_m < T
        q = _load_rows(Q + h * stride_qh + _tile(offs_m, stride_qt, HEAD_DIM), rows[:, None], 0.0, MASKED)
        lse = _load_rows(LSE + h * T + offs_m, rows, float("inf"), MASKED)
        p_t = tl.math.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])  # (BLOCK_N, BLOCK_M)
        if MASKED and CAUSAL:
            p_t = tl.where(offs_m[None, :] >= offs_n[:, None], p_t, 0.0)
        do = _load_rows(DO + h * stride_doh + _tile(offs_m, stride_dot, HEAD_DIM), rows[:, None], 0.0, MASKED)
        dv = tl.dot(p_t.to(do.dtype), do, dv)
        delta = _load_rows(DELTA + h * T + offs_m, rows, 0.0, MASKED)
        ds_t = p_t * (tl.dot(v, tl.trans(do)) - delta[None, :])
        dk = tl.dot(ds_t.to(q.dtype), q, dk)
    return dk, dv

@triton.jit(do_not_specialize=['B', 'T', 'T_BUCKET', 'head_k', 'head_v'])  # one compile for every B, T, layout
def _flash_attention_bwd_dkdv_kernel(
    Q, K, V,  # as in the forward
    DO,      # (B, H, T, D) gradient of the output, strides stride_do*
    LSE,     # (B, H, T) fp32 from the forward
    DELTA,   # (B, H, T) fp32 rowsum(o * do)
    DKV,     # out: (B, T, heads, D), strides stride_gb, stride_gt (heads D apart); dk's heads from head_k on, dv's from
             # head_v (one pointer: under torch.compile a tensor passed twice would be copied once for each)
    stride_qb, stride_qh, stride_qt, stride_kb, stride_kh, stride_kt, stride_vb, stride_vh, stride_vt,
    stride_dob, stride_doh, stride_dot, stride_gb, stride_gt, head_k, head_v,
    B, H, T, GROUP: tl.constexpr, scale,  # GROUP: one compile per GQA ratio
    T_BUCKET,  # with B and H, the autotuning key, not read
    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    scale = tl.cast(scale, tl.float32)  # torch.compile passes Python floats as fp64
    qk_scale = scale * 1.4426950408889634  # log2(e)
    bh = tl.program_id(0)  # b * Hkv + key/value head
    Hkv = H // GROUP
    b, hkv = bh // Hkv, bh % Hkv
    start_n = tl.program_id(1) * BLOCK_N  # causal: the first key tiles have the most rows
    offs_n = start_n + tl.arange(0, BLOCK_N)
    cols = offs_n[:, None] < T
    k = tl.load(K + b.to(tl.int64) * stride_kb + hkv.to(tl.int64) * stride_kh
                + _tile(offs_n, stride_kt, HEAD_DIM), mask=cols, other=0.0)
    v = tl.load(V + b.to(tl.int64) * stride_vb + hkv.to(tl.int64) * stride_vh
                + _tile(offs_n, stride_vt, HEAD_DIM), mask=cols, other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    Q += b.to(tl.int64) * stride_qb
    DO += b.to(tl.int64) * stride_dob
    LSE += b.to(tl.int64) * H * T
    DELTA += b.to(tl.int64) * H * T
    # Causal: unmasked first, the query tiles inside the sequence that see the whole key
    # tile; then, masked, those the diagonal cuts and the one the end of the sequence cuts.
    # The loop order matters: ptxas serializes every wgmma of the kernel (its warning C7515,
    # docs/perf-notes.md) with the masked loop first, or with two loops when not causal.
    if CAUSAL:
        diag_end = tl.minimum(start_n + BLOCK_N, T)
        full_end = diag_end + (T - diag_end) // BLOCK_M * BLOCK_M
        dk, dv = _dkdv_tiles(dk, dv, k, v, Q, DO, LSE, DELTA, hkv, GROUP, T, stride_qh, stride_qt, stride_doh,
                             stride_dot, offs_n, diag_end, full_end, qk_scale, CAUSAL, False, HEAD_DIM, BLOCK_M)
        dk, dv = _dkdv_tiles(dk, dv, k, v, Q, DO, LSE, DELTA, hkv, GROUP, T, stride_qh, stride_qt, stride_doh,
                             stride_dot, offs_n, start_n, diag_end, qk_scale, CAUSAL, True, HEAD_DIM, BLOCK_M)
        dk, dv = _dkdv_tiles(dk, dv, k, v, Q, DO, LSE, DELTA, hkv, GROUP, T, stride_qh, stride_qt, stride_doh,
                             stride_dot, offs_n, full_end, T, qk_scale, CAUSAL, True, HEAD_DIM, BLOCK_M)
    else:
        dk, dv = _dkdv_tiles(dk, dv, k, v, Q, DO, LSE, DELTA, hkv, GROUP, T, stride_qh, stride_qt, stride_doh,
                             stride_dot, offs_n, 0, T, qk_scale, CAUSAL, True, HEAD_DIM, BLOCK_M)
    tl.store(DKV + _bthd(b, head_k + hkv, offs_n, stride_gb, stride_gt, HEAD_DIM),
             (dk * scale).to(DKV.dtype.element_ty), mask=cols)
    tl.store(DKV + _bthd(b, head_v + hkv, offs_n, stride_gb, stride_gt, HEAD_DIM),
             dv.to(DKV.dtype.element_ty), mask=cols)

@triton.jit
def _dq_tiles(dq, q, do, lse, delta, K, V, stride_kt, stride_vt, offs_m, lo, hi, T, qk_scale,
              CAUSAL: tl.constexpr, MASKED: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    """dQ sum of one query tile over the key tiles at lo, lo + BLOCK_N, ... < hi. MASKED:
    keys past T load as zeros and add nothing (dq += ds k), and the causal diagonal is
    masked; otherwise every tile lies wholly inside the sequence and below the diagonal."""
    for start_n in tl.range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        cols = offs_n[:, None] < T
        k = _load_rows(K + _tile(offs_n, stride_kt, HEAD_DIM), cols, 0.0, MASKED)
        p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])
        if MASKED and CAUSAL:
            p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
        v = _load_rows(V + _tile(offs_n, stride_vt, HEAD_DIM), cols, 0.0, MASKED)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    return dq

@triton.jit(do_not_specialize=['B', 'T', 'T_BUCKET'])  # one compile for every B and T
def _flash_attention_bwd_dq_kernel(
    Q, K, V, DO, LSE,  # as in the dK dV kernel
    DELTA,   # (B, H, T) fp32 out: rowsum(o * do), for the dK dV kernel that runs next
    O,       # (B, T, H, D) forward output, contiguous
    DQ,      # out: (B, T, heads, D), strides stride_gb, stride_gt (heads D apart), dq's heads first
    stride_qb, stride_qh, stride_qt, stride_kb, stride_kh, stride_kt, stride_vb, stride_vh, stride_vt,
    stride_dob, stride_doh, stride_dot, stride_gb, stride_gt,
    B, H, T, GROUP, scale,
    T_BUCKET,  # with B and H, the autotuning key, not read
    HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    scale = tl.cast(scale, tl.float32)  # torch.compile passes Python floats as fp64
    qk_scale = scale * 1.4426950408889634  # log2(e)
    bh = tl.program_id(0)
    b, h = bh // H, bh % H
    start_m = (tl.num_programs(1) - 1 - tl.program_id(1)) * BLOCK_M  # longest rows first
    offs_m = start_m + tl.arange(0, BLOCK_M)
    rows = offs_m < T
    q = tl.load(Q + b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
                + _tile(offs_m, stride_qt, HEAD_DIM), mask=rows[:, None], other=0.0)
    do = tl.load(DO + b.to(tl.int64) * stride_dob + h.to(tl.int64) * stride_doh
                 + _tile(offs_m, stride_dot, HEAD_DIM), mask=rows[:, None], other=0.0)
    lse = tl.load(LSE + bh.to(tl.int64) * T + offs_m, mask=rows, other=float("inf"))
    o = tl.load(O + _bthd(b, h, offs_m, T * H * HEAD_DIM, H * HEAD_DIM, HEAD_DIM), mask=rows[:, None], other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), 1)
    tl.store(DELTA + bh.to(tl.int64) * T + offs_m, delta, mask=rows)
    K += b.to(tl.int64) * stride_kb + (h // GROUP).to(tl.int64) * stride_kh
    V += b.to(tl.int64) * stride_vb + (h // GROUP).to(tl.int64) * stride_vh
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    # key tiles inside the sequence that every row of this tile sees, unmasked; then the
    # few the diagonal or the end of the sequence cut
    full = start_m if CAUSAL else T // BLOCK_N * BLOCK_N
    dq = _dq_tiles(dq, q, do, lse, delta, K, V, stride_kt, stride_vt, offs_m, 0, full, T, qk_scale,
                   CAUSAL, False, HEAD_DIM, BLOCK_N)
    dq = _dq_tiles(dq, q, do, lse, delta, K, V, stride_kt, stride_vt, offs_m, full,
                   tl.minimum(start_m + BLOCK_M, T) if CAUSAL else T, T, qk_scale, CAUSAL, True, HEAD_DIM, BLOCK_N)
    tl.store(DQ + _bthd(b, h, offs_m, stride_gb, stride_gt, HEAD_DIM), (dq * scale).to(DQ.dtype.element_ty),
             mask=rows[:, None])

# Autotuning candidates, (BLOCK_M, BLOCK_N, num_warps, num_stages) per head dim: those
# that won or came within ~2% of the winner at the models' shapes (GPT-2 124M, LLaMA 1B,
# SmolLM2, GQA 12/4, Shakespeare-char; docs/perf-notes.md), the most often fastest first:
# KERNELS_AUTOTUNE=0 takes that one alone. Each candidate is a build at a cold start.
# The tile loops need the larger block a multiple of the smaller. The CPU interpreter
# takes one small config with unequal blocks, so the tests cross many tiles and both
# loop splits.
SMALL_HEADS = {  # 16, 32, 64
    'fwd': [(64, 64, 4, 3), (64, 64, 4, 2)],
    'dkdv': [(32, 128, 4, 3), (64, 64, 4, 3), (16, 64, 4, 3)],
    'dq': [(64, 64, 4, 2), (128, 64, 8, 3)],
}
HEAD_128 = {
    'fwd': [(128, 128, 8, 3), (128, 64, 8, 3)],
    'dkdv': [(64, 128, 8, 3), (32, 64, 4, 3)],
    'dq': [(128, 64, 8, 3), (64, 64, 4, 2)],
}
CONFIGS = {pass_: {**dict.fromkeys((16, 32, 64), SMALL_HEADS[pass_]), 128: HEAD_128[pass_]} for pass_ in HEAD_128}
INTERPRET_CONFIG = {'fwd': (32, 16, 4, 1), 'dkdv': (16, 32, 4, 1), 'dq': (32, 16, 4, 1)}
# KERNELS_AUTOTUNE=0: the first candidate only, for runs of many shapes that would
# otherwise compile and time every candidate for each (the CUDA tests)
AUTOTUNE = os.environ.get("KERNELS_AUTOTUNE", "1") != "0"

def _autotuned(kernel, pass_, autotune=AUTOTUNE):
    """{head dim: kernel autotuned over CONFIGS[pass_][head dim]} (the first alone without
    autotune); one fixed config under the interpreter. An autotuner per head dim, not one
    whose configs are pruned at each call: torch.compile records a pruned kernel as a new
    kernel at every trace (backend.launch says what that costs)."""
    if not TRITON_AVAILABLE:
        return dict.fromkeys(HEAD_DIMS, kernel)
    as_config = lambda c: triton.Config({'BLOCK_M': c[0], 'BLOCK_N': c[1]}, num_warps=c[2], num_stages=c[3])
    if INTERPRET:
        return dict.fromkeys(HEAD_DIMS, triton.autotune([as_config(INTERPRET_CONFIG[pass_])], key=[])(kernel))
    # the key holds B, H and the GQA ratio: the best tiles for a few programs are not those for many
    return {d: triton.autotune([as_config(c) for c in CONFIGS[pass_][d][:None if autotune else 1]],
                               key=['B', 'H', 'GROUP', 'T_BUCKET', 'CAUSAL'], cache_results=True)(kernel)
            for d in HEAD_DIMS}

_fwd_tuned = _autotuned(_flash_attention_fwd_kernel, 'fwd')
_dkdv_tuned = _autotuned(_flash_attention_bwd_dkdv_kernel, 'dkdv')
_dq_tuned = _autotuned(_flash_attention_bwd_dq_kernel, 'dq')

def _problem(q, k, v, dropout_p):
    """Why the kernels cannot take these inputs, or None."""
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        return "q, k, v must be 4-D (B, H, T, D)"
    if k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[2:] != k.shape[2:]:
        return (f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} "
                f"are not (B, H, T, D), (B, Hkv, T, D) x 2")
    if q.shape[1] % k.shape[1] != 0:
        return f"{q.shape[1]} query heads are not a multiple of {k.shape[1]} key/value heads"
    if q.shape[-1] not in HEAD_DIMS:
        return f"head dim {q.shape[-1]} is not one of {HEAD_DIMS}"
    if not q.dtype == k.dtype == v.dtype:
        return f"dtypes {q.dtype}, {k.dtype}, {v.dtype} differ"
    if q.dtype not in (torch.bfloat16, torch.float16):
        return f"dtype {q.dtype}: the kernel takes bf16 or fp16"
    if dropout_p > 0:
        return "dropout is not in the kernel"
    return None

def _strides(*tensors):
    return [s for t in tensors for s in t.stride()[:3]]

def _head_dim_contiguous(t):
    return t if t.stride(-1) == 1 else t.contiguous()

def _fake_fwd(q, k, v, causal, scale):
    B, H, T, D = q.shape
    return q.new_empty(B, T, H, D).transpose(1, 2), q.new_empty(B, H, T, dtype=torch.float32)

@for_compile("flash_attention_fwd", _fake_fwd)
def flash_attention_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                        scale: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """(o, lse) for q (B, H, T, D), k and v (B, Hkv, T, D)."""
    problem = _problem(q, k, v, 0.0)
    if problem:
        raise ValueError(f"flash_attention: {problem}")
    q, k, v = (_head_dim_contiguous(t) for t in (q, k, v))
    B, H, T, D = q.shape
    o = q.new_empty(B, T, H, D)  # heads side by side in memory, returned as a (B, H, T, D) view
    lse = q.new_empty(B, H, T, dtype=torch.float32)
    if o.numel() > 0:
        grid = lambda meta: (B * H, cdiv(T, meta['BLOCK_M']))
        launch(_fwd_tuned[D])[grid](
            q, k, v, o, lse, *_strides(q, k, v), B, H, T, H // k.shape[1], scale, next_power_of_2(T),
            HEAD_DIM=D, CAUSAL=causal)
    return o.transpose(1, 2), lse

def _bwd_into(do, q, k, v, o, lse, causal, scale, dq, dkv, head_k, head_v):
    """Launch the dQ kernel (it writes delta first) and the dK dV kernel. dq, dkv: the
    (B, T, heads, D) tensors they write, heads D apart: dq's heads from 0 on, dk's and dv's
    from head_k and head_v in dkv (dq and dkv may be one tensor)."""
    B, H, T, D = q.shape
    Hkv = k.shape[1]
    if dq.numel() == 0:
        return
    delta = torch.empty_like(lse)
    args = (q, k, v, do, lse, delta)
    strides = _strides(q, k, v, do)
    tail = (B, H, T, H // Hkv, scale, next_power_of_2(T))
    launch(_dq_tuned[D])[lambda meta: (B * H, cdiv(T, meta['BLOCK_M']))](
        *args, o.transpose(1, 2), dq, *strides, dq.stride(0), dq.stride(1), *tail, HEAD_DIM=D, CAUSAL=causal)
    launch(_dkdv_tuned[D])[lambda meta: (B * Hkv, cdiv(T, meta['BLOCK_N']))](
        *args, dkv, *strides, dkv.stride(0), dkv.stride(1), head_k, head_v, *tail, HEAD_DIM=D, CAUSAL=causal)

def _bwd_inputs(do, q, k, v, o):
    if do.shape != q.shape or o.shape != q.shape or o.stride(-1) != 1 or o.stride(1) != q.shape[-1]:
        raise ValueError("flash_attention_bwd: do and o must match q, o in the forward's (B, T, H, D) layout")
    return (_head_dim_contiguous(t) for t in (q, k, v, do))

def _fake_bwd(do, q, k, v, o, lse, causal, scale):
    B, H, T, D = q.shape
    return q.new_empty(B, T, H, D).transpose(1, 2), k.new_empty(B, T, 2 * k.shape[1], D)

@for_compile("flash_attention_bwd", _fake_bwd)
def flash_attention_bwd(do: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor,
                        lse: torch.Tensor, causal: bool, scale: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """(dq, dkv): dq a (B, H, T, D) view of a (B, T, H, D) tensor; dk and dv side by side in
    one (B, T, 2 Hkv, D) tensor (the op's outputs may not overlap: the caller takes the views)."""
    q, k, v, do = _bwd_inputs(do, q, k, v, o)
    B, H, T, D = q.shape
    Hkv = k.shape[1]
    dq, dkv = q.new_empty(B, T, H, D), k.new_empty(B, T, 2 * Hkv, D)
    _bwd_into(do, q, k, v, o, lse, causal, scale, dq, dkv, 0, Hkv)
    return dq.transpose(1, 2), dkv

def split_qkv(qkv, n_head):
    """q (B, H, T, D), k and v (B, Hkv, T, D): views of a (B, T, H + 2 Hkv, D) projection."""
    if qkv.dim() != 4 or n_head < 1 or (qkv.shape[2] - n_head) % 2 or qkv.shape[2] <= n_head:
        raise ValueError(f"flash_attention_qkv: qkv {tuple(qkv.shape)} is not (B, T, {n_head} + 2 Hkv, D)")
    n_kv = (qkv.shape[2] - n_head) // 2
    return qkv.transpose(1, 2).split([n_head, n_kv, n_kv], dim=1)

def _fake_qkv_bwd(do, qkv, o, lse, causal, scale):
    return torch.empty_like(qkv, memory_format=torch.contiguous_format)

@for_compile("flash_attention_qkv_bwd", _fake_qkv_bwd)
def flash_attention_qkv_bwd(do: torch.Tensor, qkv: torch.Tensor, o: torch.Tensor, lse: torch.Tensor, causal: bool,
                            scale: float) -> torch.Tensor:
    """The gradient of a (B, T, H + 2 Hkv, D) qkv projection as one tensor of its layout,
    dq, dk, dv written in place by the kernels (H = do's heads)."""
    q, k, v, do = _bwd_inputs(do, *split_qkv(qkv, do.shape[1]), o)
    H, Hkv = q.shape[1], k.shape[1]
    dqkv = torch.empty_like(qkv, memory_format=torch.contiguous_format)
    _bwd_into(do, q, k, v, o, lse, causal, scale, dqkv, dqkv, H, H + Hkv)
    return dqkv

class FlashAttentionFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, q, k, v, causal, scale):
        o, lse = flash_attention_fwd(q, k, v, causal, scale)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal, ctx.scale = causal, scale
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dkv = flash_attention_bwd(do, q, k, v, o, lse, ctx.causal, ctx.scale)
        dk, dv = dkv.transpose(1, 2).split(k.shape[1], dim=1)  # (B, Hkv, T, D) each
        return dq, dk, dv, None, None

class FlashAttentionQKVFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, qkv, n_head, causal, scale):
        o, lse = flash_attention_fwd(*split_qkv(qkv, n_head), causal, scale)
        ctx.save_for_backward(qkv, o, lse)
        ctx.causal, ctx.scale = causal, scale
        return o

    @staticmethod
    def backward(ctx, do):
        qkv, o, lse = ctx.saved_tensors
        return flash_attention_qkv_bwd(do, qkv, o, lse, ctx.causal, ctx.scale), None, None, None

def flash_attention(q, k, v, causal=True, scale=None, dropout_p=0.0, backend="auto"):
    """F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=causal,
    scale=scale, enable_gqa=True), by the Triton kernels or PyTorch as `backend` says
    (see kernels/backend.py): q (B, H, T, D), k and v (B, Hkv, T, D)."""
    if not use_triton("flash_attention", backend, q, k, v, limit=_problem(q, k, v, dropout_p)):
        return flash_attention_ref(q, k, v, causal, scale, dropout_p)
    return FlashAttentionFunction.apply(q, k, v, causal, 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale)

def flash_attention_qkv(qkv, n_head, causal=True, scale=None, dropout_p=0.0, backend="auto"):
    """flash_attention(q, k, v, ...) for q, k, v read in place from one (B, T, n_head + 2 Hkv, D)
    projection (its heads side by side: queries, then keys, then values). Its gradient comes
    back as one tensor of that layout, which the projection's backward reads as it is;
    split views would have autograd concatenate dq, dk and dv (a copy of the whole qkv)."""
    q, k, v = split_qkv(qkv, n_head)
    if not use_triton("flash_attention", backend, q, k, v, limit=_problem(q, k, v, dropout_p)):
        # the same views split before the transpose, as nanoGPT makes them: autograd then concatenates their
        # gradients along contiguous rows, not across the transposed layout, a slower copy in GPT-2's eager step
        # (docs/perf-notes.md)
        q, k, v = (t.transpose(1, 2) for t in qkv.split([q.shape[1], k.shape[1], v.shape[1]], dim=2))
        return flash_attention_ref(q, k, v, causal, scale, dropout_p)
    return FlashAttentionQKVFunction.apply(qkv, n_head, causal,
                                           1.0 / math.sqrt(qkv.shape[-1]) if scale is None else scale)
