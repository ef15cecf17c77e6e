"""
A minimal repro, for an upstream report if it holds: an autograd Function whose forward and
backward fill new tensors with torch._foreach_copy_ (a cast), compiled with backend='aot_eager'.
probe_casts.py (call 7) saw zero weight gradients through such a Function in the GPT model on the
GPU machine (torch 2.11, CUDA); torch 2.13 on the CPU gave the right ones. Here without the model:
prints the weight gradient's max |difference| from eager for foreach copies and for plain .to.
Run: python docs/runs/2026-11-25-issue8-s8/foreach_repro.py
"""
import torch

device = 'cuda' if torch.cuda.is_available() else 'cpu'


class ForeachCast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w):
        out = [torch.empty_like(w, dtype=torch.bfloat16)]
        torch._foreach_copy_(out, [w])
        return out[0]

    @staticmethod
    def backward(ctx, g):
        out = [torch.empty_like(g, dtype=torch.float32)]
        torch._foreach_copy_(out, [g])
        return out[0]


class ToCast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w):
        return w.to(torch.bfloat16)

    @staticmethod
    def backward(ctx, g):
        return g.float()


class Linear(torch.nn.Module):
    def __init__(self, cast):
        super().__init__()
        self.weight, self.cast = torch.nn.Parameter(torch.randn(16, 32)), cast

    def forward(self, x):
        return (x @ self.cast.apply(self.weight).t()).float().square().sum()


def grad(cast, compiled, as_parameter):
    """The weight's gradient: a module's Parameter (as in the GPT) or a tensor argument."""
    torch.manual_seed(0)
    torch._dynamo.reset()
    x = torch.randn(64, 32, device=device, dtype=torch.bfloat16)
    module = Linear(cast).to(device)
    if as_parameter:
        f, args, w = module, (x,), module.weight
    else:
        w = module.weight.detach().clone().requires_grad_()
        f, args = (lambda x, w: (x @ cast.apply(w).t()).float().square().sum()), (x, w)  # noqa: E731
    (torch.compile(f, backend='aot_eager') if compiled else f)(*args).backward()
    return w.grad


print(f"torch {torch.__version__}, {device}")
for as_parameter in (False, True):
    for cast in (ForeachCast, ToCast):
        eager, compiled = grad(cast, False, as_parameter), grad(cast, True, as_parameter)
        print(f"{cast.__name__:12s} {'Parameter' if as_parameter else 'argument ':9s} max |compiled - eager| "
              f"{(compiled - eager).abs().max().item():.3e}, max |eager| {eager.abs().max().item():.3e}, "
              f"compiled all zero: {bool((compiled == 0).all())}")
