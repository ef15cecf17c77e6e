"""Would an AdamW of our own that also writes each matrix's bf16 copy pay? (call 7; a probe, not the product)

GPT-2 124M's parameters as bench.py's step has them (fp32, 75 tensors, weight decay on the 50 matrices), random
gradients. Timed in CUDA graphs of 10 steps, ms per step, three rounds in turn:
  torch       torch.optim.AdamW(fused=True), what the step runs now;
  torch+cast  the same, then each matrix cast to bf16 (one multi-tensor copy), what the forward's casts cost on top;
  triton      one Triton launch per tensor: AdamW as PyTorch's fused one does it, and the bf16 copy of each matrix
              written in the same pass (+2 bytes a parameter);
  triton-nocopy  the same kernel without the copies (its AdamW alone).
Bytes: AdamW reads p, g, m, v and writes p, m, v (28 B a parameter), the copy 2 B more; the separate cast reads 4 and
writes 2. `python adamw_probe.py --check` (CPU, TRITON_INTERPRET=1) compares the kernel with torch's AdamW.
Calls 7-8 timed with a copy of kernels.choose.graph_ms (the median of 5 replays); it now calls that one."""
import os
import sys
import torch
import triton
import triton.language as tl

sys.path.insert(0, os.getcwd())
from kernels.choose import graph_ms

@triton.jit
def _adamw_kernel(P, G, M, V, P16, n, lr, beta1, beta2, eps, wd, step_size, bc2_sqrt,
                  WRITE16: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(P + offs, mask=mask)
    g = tl.load(G + offs, mask=mask)
    m = tl.load(M + offs, mask=mask)
    v = tl.load(V + offs, mask=mask)
    p = p * (1.0 - lr * wd)
    m = m + (1.0 - beta1) * (g - m)  # lerp, as the fused kernel
    v = beta2 * v + (1.0 - beta2) * g * g
    p = p - step_size * m / (tl.sqrt(v) / bc2_sqrt + eps)
    tl.store(P + offs, p, mask=mask)
    tl.store(M + offs, m, mask=mask)
    tl.store(V + offs, v, mask=mask)
    if WRITE16:
        tl.store(P16 + offs, p.to(tl.bfloat16), mask=mask)

BLOCK, WARPS = 4096, 4  # the sweep: `adamw_probe.py BLOCK WARPS`

def triton_adamw(params, grads, ms, vs, copies, step, lr, betas, eps, wds):
    beta1, beta2 = betas
    step_size, bc2_sqrt = lr / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5
    for p, g, m, v, c, wd in zip(params, grads, ms, vs, copies, wds):
        _adamw_kernel[(triton.cdiv(p.numel(), BLOCK),)](p, g, m, v, p if c is None else c, p.numel(), lr, beta1, beta2,
                                                        eps, wd, step_size, bc2_sqrt, WRITE16=c is not None, BLOCK=BLOCK,
                                                        num_warps=WARPS)

def gpt2_shapes(n_layer=12, C=768, V=50304, T=1024):
    mats = [(V, C), (T, C)] + [s for _ in range(n_layer) for s in ((3 * C, C), (C, C), (4 * C, C), (C, 4 * C))]
    return mats, [(C,)] * (2 * n_layer + 1)

def make(device, scale=1):
    mats, vecs = gpt2_shapes() if scale == 1 else gpt2_shapes(n_layer=2, C=64, V=96, T=32)
    params = [torch.randn(s, device=device) * 0.02 for s in mats + vecs]
    grads = [torch.randn_like(p) * 1e-3 for p in params]
    return params, grads, len(mats)

def check():
    torch.manual_seed(0)
    params, grads, n_mat = make('cpu', scale=0)
    ref = [p.clone().requires_grad_() for p in params]
    opt = torch.optim.AdamW([dict(params=ref[:n_mat], weight_decay=0.1), dict(params=ref[n_mat:], weight_decay=0.0)],
                            lr=6e-4, betas=(0.9, 0.95))
    ms, vs = [torch.zeros_like(p) for p in params], [torch.zeros_like(p) for p in params]
    copies = [torch.empty_like(p, dtype=torch.bfloat16) for p in params[:n_mat]] + [None] * (len(params) - n_mat)
    wds = [0.1] * n_mat + [0.0] * (len(params) - n_mat)
    for step in (1, 2, 3):
        for r, g in zip(ref, grads):
            r.grad = g
        opt.step()
        triton_adamw(params, grads, ms, vs, copies, step, 6e-4, (0.9, 0.95), 1e-8, wds)
    err = max(((p - r.detach()).abs().max() / r.detach().abs().max()).item() for p, r in zip(params, ref))
    bits = all(torch.equal(c, p.to(torch.bfloat16)) for c, p in zip(copies[:n_mat], params[:n_mat]))
    print(f"largest relative difference to torch's AdamW after 3 steps: {err:.2e}; bf16 copies equal p.to(bf16): {bits}"
          " (kernels.backend makes the interpreter round as the GPU does)")

def bench():
    torch.manual_seed(0)
    params, grads, n_mat = make('cuda')
    n = sum(p.numel() for p in params)
    wds = [0.1] * n_mat + [0.0] * (len(params) - n_mat)
    leaves = [p.clone().requires_grad_() for p in params]
    for l, g in zip(leaves, grads):
        l.grad = g
    opt = torch.optim.AdamW([dict(params=leaves[:n_mat], weight_decay=0.1), dict(params=leaves[n_mat:], weight_decay=0.0)],
                            lr=6e-4, betas=(0.9, 0.95), fused=True, capturable=True)  # as StepGraph runs it
    copies = [torch.empty_like(p, dtype=torch.bfloat16) for p in params[:n_mat]]
    ms, vs = [torch.zeros_like(p) for p in params], [torch.zeros_like(p) for p in params]

    def torch_step():
        opt.step()

    def torch_cast():
        opt.step()
        torch._foreach_copy_(copies, [l.detach() for l in leaves[:n_mat]])

    def ours(write):
        return lambda: triton_adamw(params, grads, ms, vs, (copies if write else [None] * n_mat) + [None] * (len(params) - n_mat),
                                    10, 6e-4, (0.9, 0.95), 1e-8, wds)
    ours(True)()
    print("bf16 copies equal p.to(bf16), bit for bit:", all(torch.equal(c, p.to(torch.bfloat16)) for c, p in zip(copies, params)))
    cases = dict(torch=torch_step, **{'torch+cast': torch_cast}, triton=ours(True), **{'triton-nocopy': ours(False)})
    results = {k: [] for k in cases}
    for _ in range(3):
        for k, fn in cases.items():
            results[k].append(graph_ms(fn))
    gb = {'torch': 28 * n, 'torch+cast': 28 * n + 6 * sum(c.numel() for c in copies),
          'triton': 28 * n + 2 * sum(c.numel() for c in copies), 'triton-nocopy': 28 * n}
    print(f"{n:,} parameters, {n_mat} matrices ({sum(c.numel() for c in copies):,} parameters); ms per step (3 rounds), GB/s of the bytes that must move")
    for k, ts in results.items():
        med = sorted(ts)[1]
        print(f"  {k:14s} {', '.join(f'{t:.3f}' for t in ts)}  median {med:.3f} ms  {gb[k] / med / 1e6:,.0f} GB/s")

if __name__ == '__main__':
    if len(sys.argv) == 3:
        BLOCK, WARPS = map(int, sys.argv[1:])
        print(f"BLOCK {BLOCK}, {WARPS} warps")
    check() if '--check' in sys.argv else bench()
