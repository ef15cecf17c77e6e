"""
Host us per call of the pieces of our eager LayerNorm and attention paths on the GPU machine's host,
on inputs too small for the GPU to limit (128 rows), under bf16 autocast as the model calls them.
Each figure is the lowest of 3 rounds of 2000 calls (after 100), rounds interleaved across pieces.
Run: python docs/runs/2026-11-25-issue8-s7/pieces.py
"""
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import torch  # noqa: E402
from torch._library.triton import set_wrap_triton_enabled  # noqa: E402

import kernels  # noqa: E402
import kernels.backend as backend  # noqa: E402
import kernels.norm as norm  # noqa: E402
import kernels.attention as attention  # noqa: E402


class _Stub:
    def __getitem__(self, grid):
        return lambda *args, **meta: None


def us(fn, calls=2000):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return t


bf16 = dict(device='cuda', dtype=torch.bfloat16)
act = lambda *s: torch.randn(*s, **bf16, requires_grad=True)
w = torch.ones(768, device='cuda', requires_grad=True)
x, r = act(1, 128, 768), act(1, 128, 768)
qkv = act(1, 128, 36, 64)
xd, rd, wd = x.detach(), r.detach(), w.detach()
y, h, stats = norm.norm_fwd(xd, rd, wd, None, 1e-5, False, torch.bfloat16)
dy = torch.ones_like(y)
q, k, v = attention.split_qkv(qkv.detach(), 12)
o, lse = attention.flash_attention_fwd(q, k, v, True, 0.125)
do = torch.ones_like(o)
part = torch.randn(1, 132, 768, device='cuda')
lean = backend._lean[id(norm._norm_fwd_kernel)]  # made by the first norm_fwd above
hit_key = next(iter(lean.compiled))
run_, function, metadata, rest = lean.compiled[hit_key]
fwd_args = (xd, rd, wd, wd, y, h, stats, 128, 768, 768, 768, 1e-5, 128)
by_value = lean.by_value
stream = torch._C._cuda_getCurrentRawStream(0)


def fwd_bwd(f):
    out = f()
    out.backward(dy if out.shape == dy.shape else do)


def ln(be):
    with torch.autocast('cuda', dtype=torch.bfloat16):
        return kernels.layer_norm(x, w, None, 1e-5, residual=r, out_dtype=torch.bfloat16, backend=be)[0]


def attn(be):
    with torch.autocast('cuda', dtype=torch.bfloat16):
        return kernels.flash_attention_qkv(qkv, 12, causal=True, backend=be)


def norm_fwd_inner():
    with set_wrap_triton_enabled(False):
        return norm.norm_fwd.__wrapped__(xd, rd, wd, None, 1e-5, False, torch.bfloat16)


def wrap_off():
    with set_wrap_triton_enabled(False):
        pass


def stubbed(fn):
    def run():
        saved = norm.launch, attention.launch
        norm.launch = attention.launch = lambda kernel: _Stub()
        try:
            return fn()
        finally:
            norm.launch, attention.launch = saved
    return run


PIECES = {
    # LayerNorm + residual
    'LN fwd+bwd, PyTorch': lambda: fwd_bwd(lambda: ln('torch')),
    'LN fwd+bwd, ours': lambda: fwd_bwd(lambda: ln('triton')),
    'LN fwd, PyTorch': lambda: ln('torch'),
    'LN fwd, ours (public)': lambda: ln('triton'),
    'LN fwd, NormFunction.apply': lambda: norm.NormFunction.apply(xd, rd, wd, None, 1e-5, False, torch.bfloat16),
    'LN fwd, norm_fwd (for_compile wrapper)': lambda: norm.norm_fwd(xd, rd, wd, None, 1e-5, False, torch.bfloat16),
    'LN fwd, norm_fwd launcher': norm_fwd_inner,
    'LN fwd, norm_fwd launcher, no launch': None,  # filled below
    'LN bwd, norm_bwd': lambda: norm.norm_bwd(dy, None, h, wd, stats, False, False),
    'launch: LeanLaunch.run': lambda: lean.run((1,), fwd_args, dict(IS_RMS=False, HAS_RESIDUAL=True, HAS_BIAS=False,
                                                                     **norm._launch(128, 768, 2, xd.device, 'fwd')[2])),
    'launch: key only': lambda: tuple(map(backend._specialised, fwd_args, by_value)),
    'launch: compiled run only': lambda: run_(1, 1, 1, stream, function, metadata, None, None, None, *fwd_args, *rest),
    'launch: cuda stream lookup': lambda: torch._C._cuda_getCurrentRawStream(torch.cuda.current_device()),
    '_launch (meta)': lambda: norm._launch(128, 768, 2, xd.device, 'fwd'),
    'use_triton': lambda: backend.use_triton('layer_norm', 'triton', x, r, w, None, limit=None),
    'as_rows': lambda: backend.as_rows(xd),
    'rows_of': lambda: backend.rows_of(xd),
    'torch.empty': lambda: torch.empty((1, 128, 768), **bf16),
    'partial.sum(1)': lambda: part.sum(1),
    'select [0]': lambda: part[0],
    'set_wrap_triton_enabled': wrap_off,
    # attention
    'attn fwd+bwd, PyTorch': lambda: fwd_bwd(lambda: attn('torch')),
    'attn fwd+bwd, ours': lambda: fwd_bwd(lambda: attn('triton')),
    'attn fwd+bwd, ours, no launch': None,
    'attn fwd, ours (public)': lambda: attn('triton'),
    'attn split_qkv': lambda: attention.split_qkv(qkv, 12),
    'attn _problem': lambda: attention._problem(q, k, v, 0.0),
    'attn flash_attention_fwd': lambda: attention.flash_attention_fwd(q, k, v, True, 0.125),
    'attn flash_attention_qkv_bwd': lambda: attention.flash_attention_qkv_bwd(do, qkv.detach(), o, lse, True, 0.125),
}
PIECES['LN fwd, norm_fwd launcher, no launch'] = stubbed(norm_fwd_inner)
PIECES['attn fwd+bwd, ours, no launch'] = stubbed(PIECES['attn fwd+bwd, ours'])

if __name__ == '__main__':
    results = {name: [] for name in PIECES}
    for _ in range(3):
        for name, fn in PIECES.items():
            results[name].append(us(fn))
    print("host us per call, lowest of 3 rounds of 2000 (all three)")
    for name, ts in results.items():
        print(f"  {name:42s} {min(ts):8.1f}   ({', '.join(f'{t:.1f}' for t in ts)})")
