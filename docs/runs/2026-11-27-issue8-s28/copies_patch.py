"""copies_bench.py's F.linear (a module of its own: functions torch.compile traces must not read __main__'s globals).
Under autocast on CUDA, a block matrix's product reads the matrix's bf16 copy, which kernels.AdamW writes with each
step (weight.bf16_copy), instead of casting the fp32 weight; its weight gradient comes out of the product in fp32
(torch.mm's out_dtype) instead of in bf16 and cast by a pass of its own."""
import torch
import torch.nn.functional as F

from model import matmul_dtype


class LinearOfCopy(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, weight, copy, bias):
        ctx.save_for_backward(x, copy)
        ctx.weight_dtype, ctx.bias_dtype = weight.dtype, None if bias is None else bias.dtype
        return F.linear(x, copy, None if bias is None else bias.to(x.dtype))

    @staticmethod
    def backward(ctx, dy):
        x, copy = ctx.saved_tensors
        with torch.autocast(dy.device.type, enabled=False):
            dy2 = dy.reshape(-1, dy.shape[-1])
            dx = dy.matmul(copy) if ctx.needs_input_grad[0] else None
            dw = torch.mm(dy2.t(), x.reshape(-1, x.shape[-1]), out_dtype=ctx.weight_dtype) if ctx.needs_input_grad[1] else None
            db = dy2.sum(0).to(ctx.bias_dtype) if ctx.needs_input_grad[3] else None
        return dx, dw, None, db


def linear(x, weight, bias=None):
    copy = getattr(weight, "bf16_copy", None)
    if copy is None or matmul_dtype(x) != copy.dtype:
        return F.linear(x, weight, bias)
    if not torch.is_grad_enabled() or not weight.requires_grad:
        return F.linear(x, copy, bias)
    return LinearOfCopy.apply(x.to(copy.dtype), weight, copy, bias)


def add_copies(model):
    """A bf16 copy of each block matrix, as kernels.AdamW's step keeps it."""
    for block in model.transformer.h:
        for w in (block.attn.c_attn.weight, block.attn.c_proj.weight, block.mlp.c_fc.weight, block.mlp.c_proj.weight):
            w.bf16_copy = w.detach().to(torch.bfloat16)


def check():
    """Gradients and output against F.linear's under autocast, and the copy after one kernels.AdamW step."""
    import kernels
    torch.manual_seed(0)
    x = torch.randn(12, 1024, 768, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(3072, 768, device="cuda") * 0.02).requires_grad_()
    dy = torch.randn(12, 1024, 3072, device="cuda", dtype=torch.bfloat16)
    w.bf16_copy = w.detach().to(torch.bfloat16)
    grads = []
    for fn in (F.linear, linear):
        with torch.autocast("cuda", torch.bfloat16):
            y = fn(x, w)
        grads.append((y,) + torch.autograd.grad(y, (x, w), dy))
    ref = torch.mm(dy.reshape(-1, 3072).double().t(), x.detach().reshape(-1, 768).double())
    (y0, dx0, dw0), (y1, dx1, dw1) = grads
    w.grad = dw1
    opt = kernels.AdamW([w], lr=1e-3, fused=True, backend="triton")
    opt.step()
    print(f"check: y equal {torch.equal(y0, y1)}, dx equal {torch.equal(dx0, dx1)}, dw dtype {dw1.dtype}, "
          f"dw error against fp64: F.linear's {(dw0.double() - ref).abs().max().item():.3e}, "
          f"this one's {(dw1.double() - ref).abs().max().item():.3e}; "
          f"copy after a step equal to the weight's cast: {torch.equal(w.bf16_copy, w.detach().to(torch.bfloat16))}")
