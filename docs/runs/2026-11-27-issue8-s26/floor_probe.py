"""The rates that bound GPT-2 124M's training step (12 x 1024 tokens, bf16) on this GPU, for a table of floors: each
timed by kernels.choose.graph_ms (10 calls in a CUDA graph, cuBLAS without its workspace as StepGraph records a step,
median of 10 replays). Run twice: as it comes, then right after ~5 s of large products, so the clock sits where a
training run holds it under the power cap. Run from the repo root."""
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.getcwd())
import kernels  # noqa: E402
from kernels.choose import graph_ms  # noqa: E402

dev, bf16 = "cuda", torch.bfloat16
N, C, V, B, H, T, D = 12288, 768, 50304, 12, 12, 1024, 64


def show(name, ms, work, unit):
    if ms is None:  # the capture failed (graph_ms said why)
        print(f"  {name:58s} n/a", flush=True)
        return
    per_ms = work / ms / (1e6 if unit == "GB/s" else 1e9)  # bytes -> GB/s, FLOPs -> TFLOP/s
    print(f"  {name:58s} {ms * 1e3:9.1f} us {per_ms:8.1f} {unit}", flush=True)


def timed(fn):
    return graph_ms(fn, as_step_graph=True)


def heat(seconds=5.0):
    a = torch.randn(8192, 8192, device=dev, dtype=bf16)
    end = time.time() + seconds
    while time.time() < end:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()


def probe():
    n = 256 * 2**20
    a, c = torch.randn(n, device=dev, dtype=bf16), torch.randn(n, device=dev, dtype=bf16)
    b = torch.empty_like(a)
    show("HBM: copy 512 MiB bf16 (read + write)", timed(lambda: b.copy_(a)), 4 * n, "GB/s")
    show("HBM: a + c -> b, 512 MiB each (2 reads + write)", timed(lambda: torch.add(a, c, out=b)), 6 * n, "GB/s")
    del a, b, c

    # AdamW as torch's fused kernel runs it: GPT-2's 75 tensors, and the same count as one flat tensor
    shapes = [(V, C), (T, C)] + [s for _ in range(12) for s in ((C,), (3 * C, C), (C, C), (C,), (4 * C, C), (C, 4 * C))] + [(C,)]
    count = sum(torch.Size(s).numel() for s in shapes)
    for name, sizes in (("AdamW fused, GPT-2's 75 tensors", shapes), ("AdamW fused, one flat tensor", [(count,)])):
        p = [torch.randn(s, device=dev) for s in sizes]
        g, m, v = ([torch.randn_like(t) for t in p] for _ in range(3))
        v = [t.abs() for t in v]
        step = [torch.ones((), device=dev) for _ in p]
        run = lambda: torch._fused_adamw_(p, g, m, v, [], step, lr=6e-4, beta1=0.9, beta2=0.95, weight_decay=0.1, eps=1e-8,
                                          amsgrad=False, maximize=False)
        show(f"{name} ({count / 1e6:.2f}M, 28 B each)", timed(run), 28 * count, "GB/s")
        del p, g, m, v

    # the step's products (forward shapes; the backward's are the same sizes) and a large square one
    x = torch.randn(N, C, device=dev, dtype=bf16)
    for name, (k, n_out) in {"qkv 768 -> 2304": (C, 3 * C), "attn proj 768 -> 768": (C, C), "fc 768 -> 3072": (C, 4 * C),
                             "mlp proj 3072 -> 768": (4 * C, C)}.items():
        a = x if k == C else torch.randn(N, k, device=dev, dtype=bf16)
        w = torch.randn(n_out, k, device=dev, dtype=bf16)
        show(f"mm {N} x {name}", timed(lambda: a @ w.T), 2 * N * k * n_out, "TFLOP/s")
    xc, w = torch.randn(4096, C, device=dev, dtype=bf16), torch.randn(V, C, device=dev, dtype=bf16)
    show("mm 4096 x 768 -> 50304 (the loss's chunk logits)", timed(lambda: xc @ w.T), 2 * 4096 * C * V, "TFLOP/s")
    sq = torch.randn(8192, 8192, device=dev, dtype=bf16)
    show("mm 8192 x 8192 x 8192", timed(lambda: sq @ sq), 2 * 8192**3, "TFLOP/s")
    del x, xc, w, sq

    # attention at GPT-2's shape, causal: forward 4 B H T^2 D / 2, backward 2.5x that
    q, k, v = (torch.randn(B, H, T, D, device=dev, dtype=bf16, requires_grad=True) for _ in range(3))
    do = torch.randn(B, H, T, D, device=dev, dtype=bf16)
    fwd_flops = 4 * B * H * T * T * D / 2
    impls = {"ours (Triton)": lambda: kernels.flash_attention(q, k, v, causal=True, backend="triton")}
    for name, be in (("SDPA flash", SDPBackend.FLASH_ATTENTION), ("SDPA cuDNN", SDPBackend.CUDNN_ATTENTION),
                     ("SDPA efficient", SDPBackend.EFFICIENT_ATTENTION)):
        impls[name] = lambda be=be: _sdpa(q, k, v, be)
    for name, f in impls.items():
        try:
            show(f"attention fwd, {name}", timed(lambda: f().detach()), fwd_flops, "TFLOP/s")
            show(f"attention fwd + bwd, {name}", timed(lambda: torch.autograd.grad(f(), (q, k, v), do)),
                 3.5 * fwd_flops, "TFLOP/s")
        except Exception as e:  # a backend this build or GPU lacks
            print(f"  attention, {name}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")


def _sdpa(q, k, v, be):
    with sdpa_kernel(be):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


print(torch.cuda.get_device_name(), torch.__version__)
print("pass 1: as it comes")
probe()
heat()
print("pass 2: after ~5 s of 8192^3 products")
probe()
