"""
Which part of CastMatrices does torch 2.11's AOTAutograd on CUDA get wrong (calls 4-5: the compiled
model's last MLP c_proj gradient off by 100%, eager exact)? Variants of the Function, patched into
model.py with Block.matrices' torch.compile guard taken out (call 6 ran it with the guard in: void), each compared under torch.compile(backend='aot_eager') with the eager model without
per-block casts (bit for bit expected): the max relative gradient difference and where.
Run: python docs/runs/2026-11-25-issue8-s8/probe_casts.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
import torch  # noqa: E402

import model as M  # noqa: E402

device = 'cuda' if torch.cuda.is_available() else 'cpu'
config = M.GPTConfig(block_size=128, vocab_size=512, n_layer=2, n_head=4, n_embd=128, bias=False)
idx = torch.randint(512, (4, 128), device=device)


class DtypeArgForeach(torch.autograd.Function):  # the product's
    @staticmethod
    def forward(ctx, dtype, *ws):
        return M.copied(ws, dtype)

    @staticmethod
    def backward(ctx, *gs):
        return None, *M.copied(gs, torch.float32)


class DtypeArgTo(torch.autograd.Function):  # per-tensor .to instead of the multi-tensor copy
    @staticmethod
    def forward(ctx, dtype, *ws):
        return tuple(w.to(dtype) for w in ws)

    @staticmethod
    def backward(ctx, *gs):
        return None, *(g.float() for g in gs)


class NoDtypeArg(torch.autograd.Function):  # tensors only
    @staticmethod
    def forward(ctx, *ws):
        return M.copied(ws, torch.bfloat16)

    @staticmethod
    def backward(ctx, *gs):
        return M.copied(gs, torch.float32)


class DtypeArgForeachCtx(torch.autograd.Function):  # the product's, with its ctx attribute
    @staticmethod
    def forward(ctx, dtype, *ws):
        ctx.weight_dtype = ws[0].dtype
        return M.copied(ws, dtype)

    @staticmethod
    def backward(ctx, *gs):
        return None, *M.copied(gs, ctx.weight_dtype)


class OneOutput(torch.autograd.Function):  # one matrix per call
    @staticmethod
    def forward(ctx, w):
        return w.to(torch.bfloat16)

    @staticmethod
    def backward(ctx, g):
        return g.float()


def matrices_also_compiled(self, x):
    """Block.matrices without its torch.compile guard, so that the compiled model casts per block too."""
    weights = (self.attn.c_attn.weight, self.attn.c_proj.weight, self.mlp.c_fc.weight, self.mlp.c_proj.weight)
    dtype = M.matmul_dtype(x)
    return M.CastMatrices.apply(dtype, *weights) if self.cast_per_block and dtype not in (None, weights[0].dtype) else weights


M.Block.matrices = matrices_also_compiled
product = M.CastMatrices


def grads(cast_per_block, compiled):
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = M.GPT(config, kernels='torch', device_type=device, cast_per_block=cast_per_block).to(device)
    stepped = torch.compile(model, backend='aot_eager') if compiled else model
    with torch.autocast(device, dtype=torch.bfloat16):
        _, loss = stepped(idx, idx)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


ref = grads(False, False)
apply_of = {
    'the product (ctx attribute)': lambda dtype, *ws: product.apply(dtype, *ws),
    'a copy of it': lambda dtype, *ws: DtypeArgForeachCtx.apply(dtype, *ws),
    'dtype arg, foreach copies, no ctx': lambda dtype, *ws: DtypeArgForeach.apply(dtype, *ws),
    'dtype arg, per-tensor .to': lambda dtype, *ws: DtypeArgTo.apply(dtype, *ws),
    'tensors only': lambda dtype, *ws: NoDtypeArg.apply(*ws),
    'one matrix per call': lambda dtype, *ws: tuple(OneOutput.apply(w) for w in ws),
}
for name, apply in apply_of.items():
    M.CastMatrices = type('Patched', (), {'apply': staticmethod(apply)})
    for compiled in (False, True):
        g = grads(True, compiled)
        worst = max((((g[n] - ref[n]).abs().max() / ref[n].abs().max()).item(), n) for n in ref)
        zero = [n for n in ref if g[n].abs().max() == 0]
        print(f"{name:38s} {'aot_eager' if compiled else 'eager':9s} worst rel diff {worst[0]:.2e} ({worst[1]})"
              f"{' zero: ' + str(zero) if zero else ''}", flush=True)
