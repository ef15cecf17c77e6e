# Issue 6, session 5: persistent variants of the gram kernel (kernels/newton_schulz.py) for the
# 768^3 products, whose tiles have only 12 steps of K and so pay their prologue (pipeline fill)
# and epilogue (stores) often: a program takes tile after tile of the stack's lower-triangle
# tiles, and with flatten=True Triton's pipeliner loads the next tile's first K blocks while
# the last one's epilogue runs. LOADS: 'pointers' (as the product kernel) or 'tma' (descriptors
# made on the device, 3-D over the stack so a block never crosses into the next matrix).
import torch
import triton
import triton.language as tl


@triton.jit
def gram_persistent(X, Y, C, OUT, TILES, n_tiles, total, B, M, K, alpha, beta, gamma,
                    stride_xb, stride_xm, stride_yb, stride_ym, stride_cb, stride_cm, stride_ob, stride_om,
                    HAS_C: tl.constexpr, MIRROR_DIAGONAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
                    PROGRAMS: tl.constexpr, TMA: tl.constexpr, WS: tl.constexpr):
    pid = tl.program_id(0)
    ks = tl.arange(0, BLOCK_K)
    k_steps = tl.cdiv(K, BLOCK_K)
    if TMA:
        xd = tl.make_tensor_descriptor(X, [B, M, K], [stride_xb, stride_xm, 1], [1, BLOCK_M, BLOCK_K])
        yd = tl.make_tensor_descriptor(Y, [B, M, K], [stride_yb, stride_ym, 1], [1, BLOCK_M, BLOCK_K])
    for t in tl.range(pid, total, PROGRAMS, flatten=True, warp_specialize=WS):
        b = t // n_tiles
        ti = tl.load(TILES + 2 * (t % n_tiles))
        tj = tl.load(TILES + 2 * (t % n_tiles) + 1)
        rows_i = ti * BLOCK_M + tl.arange(0, BLOCK_M)
        rows_j = tj * BLOCK_M + tl.arange(0, BLOCK_M)
        acc = tl.zeros([BLOCK_M, BLOCK_M], tl.float32)
        for s in range(k_steps):
            k = s * BLOCK_K
            if TMA:
                xi = xd.load([b, ti * BLOCK_M, k]).reshape(BLOCK_M, BLOCK_K)
                yj = yd.load([b, tj * BLOCK_M, k]).reshape(BLOCK_M, BLOCK_K)
            else:
                in_k = (k + ks < K)[None, :]
                xi = tl.load(X + b.to(tl.int64) * stride_xb + rows_i[:, None] * stride_xm + (k + ks)[None, :],
                             mask=(rows_i < M)[:, None] & in_k, other=0.0)
                yj = tl.load(Y + b.to(tl.int64) * stride_yb + rows_j[:, None] * stride_ym + (k + ks)[None, :],
                             mask=(rows_j < M)[:, None] & in_k, other=0.0)
            acc = tl.dot(xi, tl.trans(yj), acc)
        acc *= alpha
        mask = (rows_i < M)[:, None] & (rows_j < M)[None, :]
        bb = b.to(tl.int64)
        if HAS_C:
            acc += beta * tl.load(C + bb * stride_cb + rows_i[:, None] * stride_cm + rows_j[None, :],
                                  mask=mask, other=0.0).to(tl.float32)
        acc += tl.where(rows_i[:, None] == rows_j[None, :], gamma, 0.0)
        out = acc.to(OUT.dtype.element_ty)
        if MIRROR_DIAGONAL:
            out = tl.where((rows_i[:, None] >= rows_j[None, :]) | (ti != tj), out, tl.trans(out))
        tl.store(OUT + bb * stride_ob + rows_i[:, None] * stride_om + rows_j[None, :], out, mask=mask)
        tl.store(OUT + bb * stride_ob + rows_j[:, None] * stride_om + rows_i[None, :], tl.trans(out),
                 mask=((rows_j < M)[:, None] & (rows_i < M)[None, :]) & (ti != tj))


_tiles = {}
_allocator_set = []


def gram(X, alpha=1.0, C=None, beta=0.0, gamma=0.0, Y=None, bm=128, bk=64, warps=4, stages=3, per_sm=2, tma=False,
         ws=False):
    mirror = Y is not None and Y is not X
    Y = X if Y is None else Y
    B, M, K = X.shape
    T = triton.cdiv(M, bm)
    if T not in _tiles:
        _tiles[T] = torch.tensor([(i, j) for i in range(T) for j in range(i + 1)], dtype=torch.int32, device=X.device)
    tiles = _tiles[T]
    if tma and not _allocator_set:
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device='cuda'))
        _allocator_set.append(1)
    out = torch.empty(B, M, M, device=X.device, dtype=X.dtype)
    Cs = out if C is None else C
    total = B * len(tiles)
    programs = min(total, per_sm * torch.cuda.get_device_properties(X.device).multi_processor_count)
    gram_persistent[(programs,)](X, Y, Cs, out, tiles, len(tiles), total, B, M, K, alpha, beta, gamma,
                                 X.stride(0), X.stride(1), Y.stride(0), Y.stride(1), Cs.stride(0), Cs.stride(1),
                                 out.stride(0), out.stride(1), HAS_C=C is not None, MIRROR_DIAGONAL=mirror, BLOCK_M=bm,
                                 BLOCK_K=bk, PROGRAMS=programs, TMA=tma, WS=ws, num_warps=warps, num_stages=stages)
    return out
