"""
A prototype, for measuring only (not the product's code): does casting the blocks' weight matrices
to bf16 once per block and step, in one multi-tensor copy, save the eager step host time that
autocast's per-use casts cost? Autocast casts each fp32 matrix as a linear uses it (a `_to_copy`
and a ToCopyBackward node each, 48 per step) and casts each bf16 weight gradient back. Here each
block's 4 matrices go through one autograd Function (CastBlock): forward, one bf16 buffer and one
`torch._foreach_copy_` into its views; backward, one fp32 buffer and one `_foreach_copy_` of the 4
gradients, so the fp32 parameters get the values autocast gives them (checked below: equal losses
and gradients, bit for bit). The blocks' Linears read their cast weight from the module.
Variants, interleaved in rounds: autocast as the model does it; CastBlock; the matrices stored in
bf16 (autocast casts nothing: the bound, call 1 of this folder). For each, host ms per step at
1 x 128 tokens and ms per step at 12 x 1024 (bench.py's workload, the set 'auto' picks: Triton
LayerNorm, attention and loss, bf16 stream).
Run: python docs/runs/2026-11-25-issue8-s7/weight_casts.py [--check]   (--check: the equality
check only, small, on the CPU if there is no GPU)
"""
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, HERE)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from model import GPTConfig, GPT  # noqa: E402


class CastBlock(torch.autograd.Function):
    """fp32 matrices -> bf16 copies (views of one buffer); their gradients back to fp32 the same way."""

    @staticmethod
    def forward(ctx, *weights):
        ctx.shapes = [w.shape for w in weights]
        return _copies(weights, torch.bfloat16)

    @staticmethod
    def backward(ctx, *grads):
        return _copies(grads, torch.float32)


def _copies(tensors, dtype):
    flat = torch.empty(sum(t.numel() for t in tensors), dtype=dtype, device=tensors[0].device)
    out = [part.view(t.shape) for part, t in zip(flat.split([t.numel() for t in tensors]), tensors)]
    torch._foreach_copy_(out, list(tensors))
    return tuple(out)


def _linear_reading_cast(self, x):
    return F.linear(x, self.cast, self.bias)


def cast_per_block(model):
    """model with each block's Linears reading a bf16 weight cast once per step by CastBlock."""
    blocks = list(model.transformer.h)
    linears = [[b.attn.c_attn, b.attn.c_proj, b.mlp.c_fc, b.mlp.c_proj] for b in blocks]
    for ls in linears:
        for lin in ls:
            lin.forward = types.MethodType(_linear_reading_cast, lin)
    forward = model.forward

    def forward_with_casts(idx, targets=None):
        for ls in linears:
            for lin, w in zip(ls, CastBlock.apply(*[lin.weight for lin in ls])):
                lin.cast = w
        return forward(idx, targets)
    model.forward = forward_with_casts
    return model


def build(how, device, config, overrides):
    torch.manual_seed(1337)
    model = GPT(config, kernels='auto', device_type=device, overrides=overrides, autocast_residual=True).to(device)
    if how == 'cast per block':
        cast_per_block(model)
    elif how == 'bf16 matrices':
        for p in model.parameters():
            if p.dim() >= 2:
                p.data = p.data.bfloat16()
    return model


def check(device):
    """One forward + backward: CastBlock gives autocast's loss and gradients exactly."""
    config = GPTConfig(block_size=64, vocab_size=512, n_layer=2, n_head=4, n_embd=64, bias=False, dropout=0.0)
    overrides = dict(layer_norm=False, mlp=False, attention=False, cross_entropy=False)
    idx = torch.randint(512, (2, 64), device=device)
    results = []
    for how in ('autocast', 'cast per block'):
        model = build(how, device, config, overrides)
        with torch.autocast(device, dtype=torch.bfloat16):
            _, loss = model(idx, idx)
        loss.backward()
        results.append((loss.detach(), {n: p.grad for n, p in model.named_parameters()}))
    (l0, g0), (l1, g1) = results
    assert torch.equal(l0, l1), (l0, l1)
    for n in g0:
        assert g0[n].dtype == g1[n].dtype == torch.float32 and torch.equal(g0[n], g1[n]), n
    print(f"check ({device}): loss and all {len(g0)} gradients equal to autocast's, bit for bit")


def main():
    from ablate import make_step, time_step, CHOSEN  # noqa: E402
    import ablate
    config = GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, bias=False, dropout=0.0)
    ablate.GPT = lambda *a, **k: build(how, 'cuda', config, CHOSEN)  # make_step builds through this
    print("host ms per step at 1 x 128 | ms per step at 12 x 1024, host ms")
    for r in range(3):
        for how in ('autocast', 'cast per block', 'bf16 matrices'):
            small = time_step(make_step(1, 128, CHOSEN))
            torch.cuda.empty_cache()
            full = time_step(make_step(12, 1024, CHOSEN))
            torch.cuda.empty_cache()
            print(f"  round {r}: {how:16s} host {small[1]:6.2f} | step {full[0]:6.2f}, host {full[1]:6.2f}", flush=True)


if __name__ == '__main__':
    check('cuda' if torch.cuda.is_available() else 'cpu')
    if '--check' not in sys.argv:
        main()
