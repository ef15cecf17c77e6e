"""
Rotary position embedding, rotate-half form (GPT-NeoX, LLaMA), for x of shape
(B, H, T, D) and angle tables cos, sin of shape (T, D/2).

Forward: each head vector splits into halves x1 = x[..., :D/2], x2 = x[..., D/2:],
and each pair (x1[i], x2[i]) at position t turns by the angle of (t, i):
    y1 = x1 * cos - x2 * sin,   y2 = x2 * cos + x1 * sin
Backward: the transpose of a rotation is the rotation back (sin -> -sin):
    dx1 = dy1 * cos + dy2 * sin,   dx2 = dy2 * cos - dy1 * sin
One kernel does both directions. Arithmetic in fp32, the result in x's dtype (as
the reference below, which computes in fp32, or float64, and casts back).
rotary_qkv turns the q and k heads of one packed (B, T, H + 2 Hkv, D) projection and
copies its v heads, into a new tensor of that layout; its gradient comes back in that
layout too, so the attention after it (flash_attention_qkv) and the projection before
it exchange one tensor each way, with no concatenation of q, k and v or of their gradients.

Constraints: x and dy in fp32, bf16 or fp16, any strides with a contiguous last
dim (q and k as views of the fused qkv projection are read in place: rotating them
both is one call on the (B, H_q + H_kv, T, D) view of the qkv tensor); D even;
cos and sin have no gradient. Output contiguous.
"""
import torch

from kernels.backend import triton, tl, use_triton, for_compile, launch, cdiv, next_power_of_2

def rotary_tables(head_dim, max_len, theta=10000.0):
    """cos and sin of shape (max_len, head_dim/2) for rotate-half rotary embeddings."""
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_len, dtype=torch.float32), inv_freq)
    return angles.cos(), angles.sin()

def rotary_ref(x, cos, sin):
    x1, x2 = x.to(torch.promote_types(x.dtype, torch.float32)).chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)

def rotary_qkv_ref(qkv, n_rot, cos, sin):
    """rotary_ref in qkv's own (B, T, heads, D) layout (the tables broadcast over heads), v appended."""
    return torch.cat((rotary_ref(qkv[:, :, :n_rot], cos[:, None], sin[:, None]), qkv[:, :, n_rot:]), dim=2)

@triton.jit
def _rotary_kernel(
    X,       # (B, H, T, D) input, strides stride_b, stride_h, stride_t, 1
    Cos,     # (T, D/2) fp32, contiguous
    Sin,     # (T, D/2) fp32, contiguous
    Y,       # (B, H, T, D) output, strides stride_yb, stride_yh, stride_yt, 1
    H, T, HALF, N_ROT, stride_b, stride_h, stride_t, stride_yb, stride_yh, stride_yt,  # heads from N_ROT on: copied
    INVERSE: tl.constexpr,  # rotate back (the backward)
    BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
):
    bh = tl.program_id(0)  # batch * H + head: axis 0 has no 65535 limit
    b, h = (bh // H).to(tl.int64), bh % H
    ts = tl.program_id(1) * BLOCK_T + tl.arange(0, BLOCK_T)
    ds = tl.arange(0, BLOCK_D)
    mask = (ts < T)[:, None] & (ds < HALF)[None, :]
    x1_ptr = X + b * stride_b + h.to(tl.int64) * stride_h + ts[:, None].to(tl.int64) * stride_t + ds[None, :]
    x1 = tl.load(x1_ptr, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x1_ptr + HALF, mask=mask, other=0.0).to(tl.float32)
    if h < N_ROT:
        cos = tl.load(Cos + ts[:, None] * HALF + ds[None, :], mask=mask, other=0.0)
        sin = tl.load(Sin + ts[:, None] * HALF + ds[None, :], mask=mask, other=0.0)
        if INVERSE:
            sin = -sin
        x1, x2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
    y1_ptr = Y + b * stride_yb + h.to(tl.int64) * stride_yh + ts[:, None].to(tl.int64) * stride_yt + ds[None, :]
    tl.store(y1_ptr, x1.to(Y.dtype.element_ty), mask=mask)
    tl.store(y1_ptr + HALF, x2.to(Y.dtype.element_ty), mask=mask)

BLOCK_T = 32  # positions per program; chosen by `python bench.py --tune=True`: docs/perf-notes.md
NUM_WARPS = 4

def _check(x, cos, sin):
    """x (B, H, T, D) with its head dim contiguous, for these tables."""
    if x.dim() != 4 or x.shape[-1] % 2:
        raise ValueError(f"rotary: x must be (B, H, T, D) with D even, got {tuple(x.shape)}")
    B, H, T, D = x.shape
    if cos.shape != (T, D // 2) or sin.shape != (T, D // 2):
        raise ValueError(f"rotary: cos and sin must be ({T}, {D // 2}), got {tuple(cos.shape)}, {tuple(sin.shape)}")
    return x if x.stride(-1) == 1 else x.contiguous()

def _rotate_into(x, cos, sin, y, inverse, n_rot):
    """y (B, H, T, D), any strides with a contiguous head dim: x's first n_rot heads turned, the rest copied."""
    B, H, T, D = x.shape
    if y.numel() > 0:
        launch(_rotary_kernel)[(B * H, cdiv(T, BLOCK_T))](
            x, cos.float().contiguous(), sin.float().contiguous(), y,
            H, T, D // 2, n_rot, *x.stride()[:3], *y.stride()[:3],
            INVERSE=inverse, BLOCK_T=BLOCK_T, BLOCK_D=next_power_of_2(D // 2), num_warps=NUM_WARPS)

def _fake_rotary(x, cos, sin, inverse):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)

@for_compile("rotary", _fake_rotary)
def rotary_fwd(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, inverse: bool) -> torch.Tensor:
    """x (B, H, T, D) turned by the angles (back by them if inverse), as a new contiguous tensor."""
    x = _check(x, cos, sin)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _rotate_into(x, cos, sin, y, inverse, x.shape[1])
    return y

def rotary_bwd(dy, cos, sin):
    """dx for dy: the same kernel, rotating back."""
    return rotary_fwd(dy, cos, sin, True)

def _fake_rotary_qkv(qkv, cos, sin, n_rot, inverse):
    return torch.empty(qkv.shape, dtype=qkv.dtype, device=qkv.device)

@for_compile("rotary_qkv", _fake_rotary_qkv)
def rotary_qkv_fwd(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, n_rot: int, inverse: bool) -> torch.Tensor:
    """qkv (B, T, heads, D) with its first n_rot heads turned (back if inverse) and the others
    copied, as a new contiguous tensor of that layout."""
    if qkv.dim() != 4 or not 0 <= n_rot <= qkv.shape[2]:
        raise ValueError(f"rotary_qkv: qkv must be (B, T, heads, D) with n_rot <= heads, "
                         f"got {tuple(qkv.shape)}, {n_rot}")
    x = _check(qkv.transpose(1, 2), cos, sin)  # (B, heads, T, D)
    y = torch.empty(qkv.shape, dtype=qkv.dtype, device=qkv.device)
    _rotate_into(x, cos, sin, y.transpose(1, 2), inverse, n_rot)
    return y

class RotaryFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, cos, sin):
        ctx.save_for_backward(cos, sin)
        return rotary_fwd(x, cos, sin, False)

    @staticmethod
    def backward(ctx, dy):
        cos, sin = ctx.saved_tensors
        return rotary_bwd(dy, cos, sin), None, None

def rotary(x, cos, sin, backend="auto"):
    """Rotate-half rotary embedding of x (B, H, T, D) by cos, sin of shape (T, D/2),
    by the Triton kernel or PyTorch as `backend` says (see kernels/backend.py)."""
    if cos.requires_grad or sin.requires_grad:
        raise ValueError("rotary: cos and sin are fixed tables; the kernel gives them no gradient")
    if not use_triton("rotary", backend, x, cos, sin):
        return rotary_ref(x, cos, sin)
    return RotaryFunction.apply(x, cos, sin)

class RotaryQKVFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, qkv, n_rot, cos, sin):
        ctx.save_for_backward(cos, sin)
        ctx.n_rot = n_rot
        return rotary_qkv_fwd(qkv, cos, sin, n_rot, False)

    @staticmethod
    def backward(ctx, dy):
        cos, sin = ctx.saved_tensors
        return rotary_qkv_fwd(dy, cos, sin, ctx.n_rot, True), None, None, None

def rotary_qkv(qkv, n_rot, cos, sin, backend="auto"):
    """rotary() of the first n_rot heads (queries and keys) of one packed projection qkv
    (B, T, heads, D), the other heads (values) copied along: a new (B, T, heads, D) tensor,
    whose gradient comes back in that layout too."""
    if cos.requires_grad or sin.requires_grad:
        raise ValueError("rotary: cos and sin are fixed tables; the kernel gives them no gradient")
    if not use_triton("rotary", backend, qkv, cos, sin):
        return rotary_qkv_ref(qkv, n_rot, cos, sin)
    return RotaryQKVFunction.apply(qkv, n_rot, cos, sin)
