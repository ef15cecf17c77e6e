"""
The elementwise halves of a Muon step (muon.py), one launch per stack of same-shape
matrices instead of a few per matrix. Around the Newton-Schulz iteration:

muon_momentum, before it: for each matrix i with gradient G_i and momentum buffer M_i,
    M_i <- lerp(M_i, G_i, 1 - mu) = mu M_i + (1 - mu) G_i       (in place, in M_i's dtype)
    U_i  = lerp(G_i, M_i, mu) = mu M_i + (1 - mu) G_i if nesterov, else M_i
    U[i] = U_i in its wide form (a tall U_i transposed), rounded to bf16
U is the (B, M, N) stack (M <= N) that kernels.newton_schulz takes; with it come
sumsq (B, tiles), fp32 sums of U's squares per tile, which add up to ||U[i]||^2:
newton_schulz's first step needs the norm, and would otherwise read U once more for it.

muon_apply, after it: for each matrix W_i (rows x cols) and its row O[i] of the result,
    W_i <- (1 - lr wd) W_i - lr max(1, rows / cols)^0.5 O[i]   (transposed back if tall)

No gradient: an optimizer's step. lerp(a, b, w) is computed as torch computes it
(a + w (b - a) for w < 0.5, else b - (b - a)(1 - w)), in fp32. skip: a device scalar
(found_inf: a non-finite loss or gradient); where it is not 0 both kernels leave
everything as it was (the momentum's U is then zeros), with no host sync.

The matrices are separate tensors (autograd makes each gradient), so each launch reads
a small table of their addresses: one program per tile of one matrix, reading and
writing it in its own layout; a tall matrix's tile is transposed on its way to or from
the stack. Tiles are square, so a tall matrix and a wide one of one stack have the
same number.

Constraints: all matrices of a call have one shape up to transposition (M, N) or
(N, M), are contiguous and share one dtype (fp32, bf16 or fp16); buffers like their
gradients.
"""
import torch

from kernels.backend import triton, tl, use_triton, cdiv, device_table, device_scalar, INTERPRET


@triton.jit
def _lerp(a, b, w):
    """torch.lerp's formula (a + w (b - a) for w < 0.5, else b - (b - a)(1 - w)), each side one FMA as torch's
    vectorized CPU and CUDA kernels have it, so the momentum rounds as PyTorch's foreach step does."""
    return tl.where(w < 0.5, tl.fma(w, b - a, a), tl.fma(a - b, 1.0 - w, b))


def _wide(t):
    return t.mT if t.size(-2) > t.size(-1) else t


def muon_momentum_ref(grads, bufs, momentum, nesterov):
    torch._foreach_lerp_(bufs, grads, 1 - momentum)
    updates = torch._foreach_lerp(grads, bufs, momentum) if nesterov else bufs
    U = torch.stack([_wide(u) for u in updates]).to(torch.bfloat16)
    return U, U.float().square().sum((-2, -1))[:, None]


def muon_apply_ref(params, O, lr, weight_decay):
    if weight_decay:
        torch._foreach_mul_(params, 1 - lr * weight_decay)
    for p, o in zip(params, O):
        p.add_(o.mT if p.size(0) > p.size(1) else o, alpha=-lr * max(1, p.size(0) / p.size(1)) ** 0.5)


@triton.jit
def _tile(t, R, C, BLOCK: tl.constexpr):
    """Tile t (row-major over the tiles) of an R x C row-major matrix: its rows, columns,
    mask and element offsets."""
    tiles_c = tl.cdiv(C, BLOCK)
    rows = (t // tiles_c) * BLOCK + tl.arange(0, BLOCK)
    cols = (t % tiles_c) * BLOCK + tl.arange(0, BLOCK)
    mask = (rows < R)[:, None] & (cols < C)[None, :]
    return rows, cols, mask, rows.to(tl.int64)[:, None] * C + cols[None, :]


@triton.jit
def _momentum_tile(G, BUF, U, R, C, t, momentum, keep, TRANSPOSED: tl.constexpr, NESTEROV: tl.constexpr,
                   BLOCK: tl.constexpr):
    """One tile of an R x C gradient and buffer; U is R x C, or C x R if TRANSPOSED.
    Returns the sum of the tile's squares of U as stored (rounded). keep False (a skipped
    step): nothing read, the buffer untouched, U's tile zeros."""
    rows, cols, mask, offs = _tile(t, R, C, BLOCK)
    kept = tl.where(keep, mask, False)  # (mask & keep: the CPU interpreter cannot and a block with a scalar)
    g = tl.load(G + offs, mask=kept, other=0.0).to(tl.float32)
    buf = tl.load(BUF + offs, mask=kept, other=0.0).to(tl.float32)
    buf = _lerp(buf, g, 1.0 - momentum).to(BUF.dtype.element_ty)
    tl.store(BUF + offs, buf, mask=kept)
    u = _lerp(g, buf.to(tl.float32), momentum) if NESTEROV else buf.to(tl.float32)
    u_offs = cols.to(tl.int64)[None, :] * R + rows[:, None] if TRANSPOSED else offs
    u = u.to(U.dtype.element_ty)
    tl.store(U + u_offs, u, mask=mask)
    u = u.to(tl.float32)  # 0 off the matrix (and when skipped): g and buf load as 0 there
    return tl.sum(tl.sum(u * u, 1), 0)


@triton.jit
def _muon_momentum_kernel(
    TABLE,  # (3, B) int64: per matrix its gradient's address, its buffer's, and 1 if it is tall
    G,      # the first gradient: every gradient's pointer type
    BUF,    # the first momentum buffer: every buffer's pointer type
    U,      # (B, M, N) bf16 out: the updates in their wide form
    SUMSQ,  # (B, tiles) fp32 out: per tile, the sum of U's squares
    SKIP,   # () fp32: not 0 = skip this step (buffers untouched, U zeros)
    B, M, N, momentum,
    NESTEROV: tl.constexpr, BLOCK: tl.constexpr,
):
    keep = tl.load(SKIP) == 0
    t, b = tl.program_id(0), tl.program_id(1)
    g = tl.load(TABLE + b).to(G.dtype)
    buf = tl.load(TABLE + B + b).to(BUF.dtype)
    U += b.to(tl.int64) * M * N
    if tl.load(TABLE + 2 * B + b) != 0:  # a tall matrix: N x M in memory
        sumsq = _momentum_tile(g, buf, U, N, M, t, momentum, keep, True, NESTEROV, BLOCK)
    else:
        sumsq = _momentum_tile(g, buf, U, M, N, t, momentum, keep, False, NESTEROV, BLOCK)
    tl.store(SUMSQ + b * tl.num_programs(0) + t, sumsq)


@triton.jit
def _apply_tile(P, O, R, C, t, alpha, decay, TRANSPOSED: tl.constexpr, BLOCK: tl.constexpr):
    """One tile of an R x C weight; O is R x C, or C x R if TRANSPOSED."""
    rows, cols, mask, offs = _tile(t, R, C, BLOCK)
    o_offs = cols.to(tl.int64)[None, :] * R + rows[:, None] if TRANSPOSED else offs
    o = tl.load(O + o_offs, mask=mask, other=0.0).to(tl.float32)
    p = tl.load(P + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(P + offs, (p * decay + alpha * o).to(P.dtype.element_ty), mask=mask)


@triton.jit
def _muon_apply_kernel(
    TABLE,  # (2, B) int64: per matrix its weight's address, and 1 if it is tall
    P,      # the first weight: every weight's pointer type
    O,      # (B, M, N) bf16: the orthogonalised updates in their wide form
    LR,     # () fp32: the learning rate, read here so that a CUDA graph of the step takes each step's
    SKIP,   # () fp32: not 0 = skip this step (weights untouched)
    B, M, N, weight_decay,
    TALL_SCALE,  # (N / M)^0.5, a tall weight's factor
    BLOCK: tl.constexpr,
):
    if tl.load(SKIP) != 0:
        return
    t, b = tl.program_id(0), tl.program_id(1)
    p = tl.load(TABLE + b).to(P.dtype)
    O += b.to(tl.int64) * M * N
    lr = tl.load(LR)
    if tl.load(TABLE + B + b) != 0:  # a tall weight: N x M in memory
        _apply_tile(p, O, N, M, t, -lr * TALL_SCALE, 1.0 - lr * weight_decay, True, BLOCK)
    else:
        _apply_tile(p, O, M, N, t, -lr, 1.0 - lr * weight_decay, False, BLOCK)


BLOCK, NUM_WARPS = (16, 4) if INTERPRET else (64, 8)


def _checked(name, tensors):
    """(M, N), the wide shape of every tensor of the lists, or a reason the kernel cannot take them."""
    M, N = sorted(tensors[0].shape) if tensors[0].dim() == 2 else (0, 0)
    if any(t.dim() != 2 or sorted(t.shape) != [M, N] for t in tensors):
        return None, f"{name}: matrices of more than one shape (up to transposition)"
    if any(not t.is_contiguous() for t in tensors) or len({t.dtype for t in tensors}) > 1:
        return None, f"{name}: matrices not all contiguous and of one dtype"
    return (M, N), None


def _grid(M, N, B):
    return (cdiv(M, BLOCK) * cdiv(N, BLOCK), B)


def _flag(skip, device):
    """skip as the kernels read it (None: 0)."""
    return device_scalar(0.0 if skip is None else skip, device)


@torch.no_grad()
def muon_momentum(grads, bufs, momentum, nesterov=True, backend="auto", skip=None):
    """Update each momentum buffer in place and return the updates as a (B, M, N) bf16
    stack of their wide forms, and the (B, tiles) fp32 sums of its squares (see the
    module's docstring). skip: None, or a device scalar; not 0: buffers left as they are."""
    shape, limit = _checked("muon_momentum", list(grads) + list(bufs))
    if shape and any(g.shape != b.shape for g, b in zip(grads, bufs)):
        shape, limit = None, "muon_momentum: a buffer's shape differs from its gradient's"
    if not use_triton("muon_momentum", backend, grads[0], bufs[0], limit=limit):
        if skip is not None and skip.item():  # PyTorch's path decides on the host
            M, N = sorted(grads[0].shape)
            return torch.zeros(len(grads), M, N, device=grads[0].device, dtype=torch.bfloat16), \
                torch.zeros(len(grads), 1, device=grads[0].device)
        return muon_momentum_ref(grads, bufs, momentum, nesterov)
    (M, N), B = shape, len(grads)
    table = device_table([[g.data_ptr() for g in grads], [b.data_ptr() for b in bufs],
                          [int(g.size(0) > g.size(1)) for g in grads]], grads[0].device)
    grid = _grid(M, N, B)
    U = torch.empty(B, M, N, device=grads[0].device, dtype=torch.bfloat16)
    sumsq = torch.empty(B, grid[0], device=grads[0].device, dtype=torch.float32)
    _muon_momentum_kernel[grid](table, grads[0], bufs[0], U, sumsq, _flag(skip, U.device), B, M, N, momentum,
                                NESTEROV=nesterov, BLOCK=BLOCK, num_warps=NUM_WARPS)
    return U, sumsq


@torch.no_grad()
def muon_apply(params, O, lr, weight_decay=0.0, backend="auto", skip=None):
    """W_i <- (1 - lr wd) W_i - lr max(1, rows/cols)^0.5 O[i], in place, for each weight
    W_i of `params` and its orthogonalised update O[i] ((B, M, N), wide forms). lr: a
    float, or a 0-d fp32 tensor on the device (what a CUDA graph of the step reads).
    skip: None, or a device scalar; not 0: weights left as they are."""
    shape, limit = _checked("muon_apply", list(params))
    if shape and (O.shape != (len(params), *shape) or not O.is_contiguous()):
        shape, limit = None, f"muon_apply: updates {tuple(O.shape)} are not a contiguous ({len(params)}, M, N) stack"
    if not use_triton("muon_apply", backend, params[0], O, limit=limit):
        if skip is None or not skip.item():  # PyTorch's path decides on the host
            muon_apply_ref(params, O, float(lr), weight_decay)
        return
    (M, N), B = shape, len(params)
    table = device_table([[p.data_ptr() for p in params], [int(p.size(0) > p.size(1)) for p in params]],
                         params[0].device)
    _muon_apply_kernel[_grid(M, N, B)](table, params[0], O, device_scalar(lr, O.device), _flag(skip, O.device), B, M, N,
                                      weight_decay, (N / M) ** 0.5, BLOCK=BLOCK, num_warps=NUM_WARPS)
