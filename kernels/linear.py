"""
F.linear under autocast reading a weight's kept copy in autocast's dtype.

Autocast casts an fp32 weight to its dtype at every use, and its weight gradient comes out of the product in
that dtype, then is cast back to fp32 by a pass of its own. Where the optimizer keeps each weight's copy in
autocast's dtype (weight.matmul_copy, written by kernels.AdamW's step with the new weights, rounded as a cast
rounds), the product reads the copy instead, and the weight gradient is summed in fp32 and written in the
weight's dtype straight from the product:
    forward:  y = x C^T + b,          C = weight.matmul_copy (= weight.to(autocast's dtype), bit for bit)
    backward: dx = dy C,  dW = dy^T x (fp32 sums, written in W's dtype),  db = sum over rows of dy
The values are autocast's; the weight gradient is at most half a unit of autocast's dtype closer to the exact
sum than autocast's, which rounds it to that dtype first.

Where the model asks for fp8 products (weight.matmul_product = Fp8LinearOfCopy), the forward and dx products run
in e4m3 instead: another rounding of x, dy and the copy, 3 mantissa bits each.

Constraints: a copy is used only where its dtype is autocast's on x's device; otherwise this is F.linear.
On the CPU the fp32 sums come from fp32 copies of dy and x (the CPU product has no out_dtype). The fp8 products
take torch._scaled_mm's row-wise scales: a Hopper GPU or newer, or the CPU from torch 2.13 (2.11's takes one scale
a tensor); both widths multiples of 16. keep_copies refuses fp8 where they cannot run, before the first product.
"""
import torch
import torch.nn.functional as F

from kernels.backend import as_rows
from kernels.rowwise_fp8 import E4M3, rowwise_fp8

linear_ref = F.linear


def matmul_dtype(x):
    """The dtype autocast runs matmuls in on x's device, or None without autocast."""
    return torch.get_autocast_dtype(x.device.type) if torch.is_autocast_enabled(x.device.type) else None


def matmul_copy(weight, x):
    """weight's kept copy for a product with x under autocast, or None (no copy, or one of another dtype)."""
    copy = getattr(weight, 'matmul_copy', None)
    return copy if copy is not None and copy.dtype == matmul_dtype(x) else None


def weight_grads(ctx, dy2, x2):
    """(dW, db) of F.linear from dy2 (rows, out) and its input x2 (rows, in), each None unless asked for: dW summed
    in fp32 and written in the weight's dtype, db summed over the rows."""
    dw = dbias = None
    if ctx.needs_input_grad[1]:
        dw = (torch.mm(dy2.t(), x2, out_dtype=ctx.weight_dtype) if dy2.is_cuda
              else dy2.t().to(ctx.weight_dtype).mm(x2.to(ctx.weight_dtype)))
    if ctx.needs_input_grad[3]:
        dbias = dy2.sum(0).to(ctx.bias_dtype)
    return dw, dbias

class LinearOfCopy(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, weight, copy, bias):
        x = x.to(copy.dtype)
        ctx.save_for_backward(x, copy)
        ctx.weight_dtype, ctx.bias_dtype = weight.dtype, None if bias is None else bias.dtype
        return F.linear(x, copy, None if bias is None else bias.to(copy.dtype))

    @staticmethod
    def backward(ctx, dy):
        x, copy = ctx.saved_tensors
        with torch.autocast(dy.device.type, enabled=False):  # as autograd runs F.linear's backward
            dx = dy.matmul(copy) if ctx.needs_input_grad[0] else None
            dw, dbias = weight_grads(ctx, dy.reshape(-1, dy.shape[-1]), x.reshape(-1, x.shape[-1]))
        return dx, dw, None, dbias

class Fp8LinearOfCopy(torch.autograd.Function):
    """LinearOfCopy with its forward and dx products in fp8 (e4m3, one scale per row of each operand:
    kernels/rowwise_fp8.py), summed by the tensor cores' fast accumulation (as torchao's forward), the scales
    applied in the products' epilogue:
        y = (x8 sx)(C8 sC)^T + b      x per token, C per output channel
        dx = (dy8 sdy)(Ct8 sCt)^T     dy per token, C^T per input channel (a transposed copy of C, cast)
        dW = dy^T x                   as LinearOfCopy: in the copy's dtype, fp32 sums
    x8 is not kept: dW reads x in the copy's dtype, so no fp8 copy of an activation is ever transposed."""

    @staticmethod
    def forward(ctx, x, weight, copy, bias):
        x2 = as_rows(x.to(copy.dtype))  # (rows, in), contiguous columns
        x8, sx = rowwise_fp8(x2)  # (rows, in), (rows, 1)
        c8, sc = rowwise_fp8(copy)  # (out, in), (out, 1)
        y = torch._scaled_mm(x8, c8.t(), scale_a=sx, scale_b=sc.t(), out_dtype=copy.dtype, use_fast_accum=True)
        ctx.save_for_backward(x2, copy)
        ctx.weight_dtype, ctx.bias_dtype, ctx.x_shape = weight.dtype, None if bias is None else bias.dtype, x.shape
        y = y.view(*x.shape[:-1], copy.shape[0])
        return y if bias is None else y + bias.to(copy.dtype)

    @staticmethod
    def backward(ctx, dy):
        x2, copy = ctx.saved_tensors
        dy2 = as_rows(dy)  # (rows, out), contiguous columns
        dx = None
        with torch.autocast(dy.device.type, enabled=False):  # as autograd runs F.linear's backward
            if ctx.needs_input_grad[0]:
                g8, sg = rowwise_fp8(dy2)  # (rows, out), (rows, 1)
                ct8, sct = rowwise_fp8(copy.t().contiguous())  # (in, out), (in, 1)
                dx = torch._scaled_mm(g8, ct8.t(), scale_a=sg, scale_b=sct.t(), out_dtype=dy.dtype,
                                      use_fast_accum=True).view(ctx.x_shape)
            dw, dbias = weight_grads(ctx, dy2, x2)
        return dx, dw, None, dbias

def fp8_refusal(weights, dtype):
    """Why the products of these weights cannot run in fp8 on copies in dtype, or None: they need copies, widths
    that are multiples of 16, and a torch._scaled_mm with row-wise scales on the weights' device in dtype (tried
    once, on a 16 x 16 product)."""
    if not weights:
        return ("the fp8 products read the copies AdamW keeps, and this run keeps none (they need bf16 or fp16 "
                "autocast, Triton's AdamW (a GPU, or TRITON_INTERPRET=1), recompute='none', neither Muon nor FSDP)")
    if any(w.shape[0] % 16 or w.shape[1] % 16 for w in weights):
        return "the fp8 products need widths that are multiples of 16"
    scale = torch.ones(16, 1, device=weights[0].device)
    a = scale.expand(16, 16).to(E4M3)  # (16, 16) ones in e4m3, by a cast every device has
    try:
        torch._scaled_mm(a, a.t(), scale_a=scale, scale_b=scale.t(), out_dtype=dtype)
    except RuntimeError as e:
        return f"this device's torch._scaled_mm takes no row-wise scales in {dtype}: {str(e).splitlines()[0]}"
    return None

def keep_copies(weights, dtype, fp8=False):
    """Give each weight its copy in dtype for its products to read (weight.matmul_copy, which kernels.AdamW keeps
    in step) and the product that reads it (weight.matmul_product: Fp8LinearOfCopy if fp8, else LinearOfCopy).
    fp8 where it cannot run (fp8_refusal) raises ValueError saying why."""
    if fp8 and (why := fp8_refusal(weights, dtype)):
        raise ValueError(f"fp8=True: {why}")
    for w in weights:
        w.matmul_copy, w.matmul_product = w.detach().to(dtype), Fp8LinearOfCopy if fp8 else LinearOfCopy

def linear(x, weight, bias=None):
    """F.linear(x, weight, bias), reading weight's kept copy where it has one for this product, by the product the
    model chose for it (weight.matmul_product: LinearOfCopy, or Fp8LinearOfCopy)."""
    copy = matmul_copy(weight, x)
    return F.linear(x, weight, bias) if copy is None else weight.matmul_product.apply(x, weight, copy, bias)
