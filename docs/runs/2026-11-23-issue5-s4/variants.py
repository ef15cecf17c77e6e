"""Experiment kernels for issue 5, session 4: a row kernel that holds the whole row in
registers (one read of the logits, no second pass), and a Triton dW += g^T x whose fp32
accumulator starts from the stored dW (its load overlaps the other program's main loop)."""
import triton
import triton.language as tl

LOG2E = 1.4426950408889634

@triton.jit
def row_whole_kernel(LOGITS, TARGETS, LOSS, V, stride_row, ignore_index, BLOCK: tl.constexpr):
    """The row, as bf16, in registers: max (exact in bf16), sum of exp2, gradient; one read, one write."""
    row = tl.program_id(0).to(tl.int64)
    target = tl.load(TARGETS + row).to(tl.int64)
    LOGITS += row * stride_row
    cols = tl.arange(0, BLOCK)
    z = tl.load(LOGITS + cols, mask=cols < V, other=float("-inf"))
    m = tl.max(z, 0).to(tl.float32)
    total = tl.sum(tl.exp2(z.to(tl.float32) * 1.4426950408889634 - m * 1.4426950408889634), 0)
    lse = m + tl.log(total)
    valid = target != ignore_index
    z_target = tl.load(LOGITS + target, mask=valid, other=0.0).to(tl.float32)
    tl.store(LOSS + row, tl.where(valid, lse - z_target, 0.0))
    scale = tl.where(valid, 1.0, 0.0)
    g = tl.exp2(z.to(tl.float32) * 1.4426950408889634 - lse * 1.4426950408889634) * scale
    tl.store(LOGITS + cols, g.to(LOGITS.dtype.element_ty), mask=cols < V)
    tl.debug_barrier()
    tl.store(LOGITS + target, (tl.exp2((z_target - lse) * 1.4426950408889634) * scale - 1.0).to(LOGITS.dtype.element_ty),
             mask=valid)

@triton.jit
def dweight_kernel(G, X, DW, V, C, H, stride_g, stride_x, stride_dw,
                   ACCUMULATE: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    """DW (V, H) fp32 = [DW +] G^T X for G (C, V), X (C, H); programs that share a slab of V run together."""
    pid = tl.program_id(0)
    n_h = tl.cdiv(H, BLOCK_H)
    pid_v, pid_h = pid // n_h, pid % n_h
    v = pid_v * BLOCK_V + tl.arange(0, BLOCK_V)
    h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    k = tl.arange(0, BLOCK_K)
    dw_ptrs = DW + v[:, None].to(tl.int64) * stride_dw + h[None, :]
    dw_mask = (v[:, None] < V) & (h[None, :] < H)
    if ACCUMULATE:
        acc = tl.load(dw_ptrs, mask=dw_mask, other=0.0)
    else:
        acc = tl.zeros([BLOCK_V, BLOCK_H], tl.float32)
    g_ptrs = G + k[None, :].to(tl.int64) * stride_g + v[:, None]   # (BLOCK_V, BLOCK_K) of G^T
    x_ptrs = X + k[:, None].to(tl.int64) * stride_x + h[None, :]   # (BLOCK_K, BLOCK_H)
    for start in range(0, C, BLOCK_K):
        a = tl.load(g_ptrs, mask=(v[:, None] < V) & (start + k[None, :] < C), other=0.0)
        b = tl.load(x_ptrs, mask=(start + k[:, None] < C) & (h[None, :] < H), other=0.0)
        acc = tl.dot(a, b, acc)
        g_ptrs += BLOCK_K * stride_g
        x_ptrs += BLOCK_K * stride_x
    tl.store(dw_ptrs, acc, mask=dw_mask)

@triton.jit
def dweight_tma_kernel(g_desc, x_desc, dw_desc, V, C, H,
                       ACCUMULATE: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    """The same through host-made tensor descriptors (TMA loads and stores)."""
    pid = tl.program_id(0)
    n_h = tl.cdiv(H, BLOCK_H)
    pid_v, pid_h = pid // n_h, pid % n_h
    off_v, off_h = pid_v * BLOCK_V, pid_h * BLOCK_H
    if ACCUMULATE:
        acc = dw_desc.load([off_v, off_h])
    else:
        acc = tl.zeros([BLOCK_V, BLOCK_H], tl.float32)
    for start in range(0, C, BLOCK_K):
        a = g_desc.load([start, off_v])          # (BLOCK_K, BLOCK_V)
        b = x_desc.load([start, off_h])          # (BLOCK_K, BLOCK_H)
        acc = tl.dot(a.T, b, acc)
    dw_desc.store([off_v, off_h], acc)

@triton.jit
def dweight_persistent_kernel(g_desc, x_desc, dw_desc, V, C, H,
                              ACCUMULATE: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr,
                              BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr, WS: tl.constexpr, FLATTEN: tl.constexpr):
    """Persistent: NUM_SMS programs walk the tiles (H fastest, so a slab of G^T is read from
    HBM once); flattened, the next tile's loads start during this one's epilogue."""
    n_h = tl.cdiv(H, BLOCK_H)
    tiles = tl.cdiv(V, BLOCK_V) * n_h
    k_tiles = tl.cdiv(C, BLOCK_K)
    for tile in tl.range(tl.program_id(0), tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WS):
        off_v, off_h = (tile // n_h) * BLOCK_V, (tile % n_h) * BLOCK_H
        acc = tl.zeros([BLOCK_V, BLOCK_H], tl.float32)
        for ki in range(k_tiles):
            a = g_desc.load([ki * BLOCK_K, off_v])
            b = x_desc.load([ki * BLOCK_K, off_h])
            acc = tl.dot(a.T, b, acc)
        if ACCUMULATE:
            acc += dw_desc.load([off_v, off_h])
        dw_desc.store([off_v, off_h], acc)
