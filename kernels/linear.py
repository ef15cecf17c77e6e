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

Constraints: a copy is used only where its dtype is autocast's on x's device; otherwise this is F.linear.
On the CPU the fp32 sums come from fp32 copies of dy and x (the CPU product has no out_dtype).
"""
import torch
import torch.nn.functional as F

linear_ref = F.linear


def matmul_dtype(x):
    """The dtype autocast runs matmuls in on x's device, or None without autocast."""
    return torch.get_autocast_dtype(x.device.type) if torch.is_autocast_enabled(x.device.type) else None


def matmul_copy(weight, x):
    """weight's kept copy for a product with x under autocast, or None (no copy, or one of another dtype)."""
    copy = getattr(weight, 'matmul_copy', None)
    return copy if copy is not None and copy.dtype == matmul_dtype(x) else None


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
            dy2, x2 = dy.reshape(-1, dy.shape[-1]), x.reshape(-1, x.shape[-1])  # (rows, out), (rows, in)
            dx = dy.matmul(copy) if ctx.needs_input_grad[0] else None
            dw = None
            if ctx.needs_input_grad[1]:
                dw = (torch.mm(dy2.t(), x2, out_dtype=ctx.weight_dtype) if dy.is_cuda
                      else dy2.t().to(ctx.weight_dtype).mm(x2.to(ctx.weight_dtype)))
            dbias = dy2.sum(0).to(ctx.bias_dtype) if ctx.needs_input_grad[3] else None
        return dx, dw, None, dbias


def linear(x, weight, bias=None):
    """F.linear(x, weight, bias), reading weight's kept copy where it has one for this product."""
    copy = matmul_copy(weight, x)
    return F.linear(x, weight, bias) if copy is None else LinearOfCopy.apply(x, weight, copy, bias)
