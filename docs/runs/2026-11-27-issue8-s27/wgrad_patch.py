"""wgrad_fp32.py's F.linear (a module of its own: functions torch.compile traces must not read __main__'s globals,
which runpy swaps for bench.py's)."""
import torch
import torch.nn.functional as F

from model import matmul_dtype


class LinearWeightGradInItsDtype(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, weight, bias):
        w = weight.to(x.dtype)  # autocast's cast, kept for the backward as autocast keeps it
        ctx.save_for_backward(x, w)
        ctx.weight_dtype, ctx.bias_dtype = weight.dtype, None if bias is None else bias.dtype
        return F.linear(x, w, None if bias is None else bias.to(x.dtype))

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        with torch.autocast(dy.device.type, enabled=False):
            dy2 = dy.reshape(-1, dy.shape[-1])
            dx = dy.matmul(w) if ctx.needs_input_grad[0] else None
            dw = torch.mm(dy2.t(), x.reshape(-1, x.shape[-1]), out_dtype=ctx.weight_dtype) if ctx.needs_input_grad[1] else None
            db = dy2.sum(0).to(ctx.bias_dtype) if ctx.needs_input_grad[2] else None
        return dx, dw, db


def linear(x, weight, bias=None):
    dtype = matmul_dtype(x)
    if dtype is None or not x.is_cuda or weight.dtype == dtype or not torch.is_grad_enabled() or not weight.requires_grad:
        return F.linear(x, weight, bias)
    return LinearWeightGradInItsDtype.apply(x.to(dtype), weight, bias)


def check():
    torch.manual_seed(0)
    x = torch.randn(12, 1024, 768, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(3072, 768, device="cuda") * 0.02).requires_grad_()
    dy = torch.randn(12, 1024, 3072, device="cuda", dtype=torch.bfloat16)
    grads = []
    for fn in (F.linear, linear):
        with torch.autocast("cuda", torch.bfloat16):
            y = fn(x, w)
        grads.append((y,) + torch.autograd.grad(y, (x, w), dy))
    ref = torch.mm(dy.reshape(-1, 3072).double().t(), x.detach().reshape(-1, 768).double())
    (y0, dx0, dw0), (y1, dx1, dw1) = grads
    print(f"check: y equal {torch.equal(y0, y1)}, dx equal {torch.equal(dx0, dx1)}, dw dtype {dw1.dtype}, "
          f"dw error against fp64: F.linear's {(dw0.double() - ref).abs().max().item():.3e}, "
          f"this one's {(dw1.double() - ref).abs().max().item():.3e}")

