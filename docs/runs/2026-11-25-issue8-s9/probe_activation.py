"""
Call 3's probe of the CUDA failures of call 2 (recompute='activation'): prints (1) how far the Triton
GELU backward's remade output is from the forward kernel's, per dtype and form; (2) for the tiny GPT-2
of tests/test_model.py under bf16 autocast, each gradient that differs between recompute='none' and
'activation', eager and aot_eager-compiled, with PyTorch's ops and with the Triton kernels.
Run: python docs/runs/2026-11-25-issue8-s9/probe_activation.py
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', '..'))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', '..', 'tests'))
import torch  # noqa: E402
import kernels  # noqa: E402
from model import GPT  # noqa: E402
from test_model import tiny_config, batch  # noqa: E402

device = 'cuda'
torch.manual_seed(0)
for dtype in (torch.float32, torch.bfloat16):
    for approx in ('none', 'tanh'):
        x = (torch.randn(37, 1000, device=device) * 2).to(dtype)
        dy = torch.randn_like(x)
        y = kernels.gelu(x, None, approx, backend='triton')
        _, _, y2 = kernels.gelu_backward(dy, x, None, approx, backend='triton')
        ref = kernels.gelu_ref(x.double(), None, approx)
        print(f"gelu {approx:4s} {str(dtype):14s} fwd vs bwd output: {(y != y2).sum().item()} of {y.numel()} differ, "
              f"max |diff| {(y.float() - y2.float()).abs().max().item():.3e}; max |fwd - f64| "
              f"{(y.double() - ref).abs().max().item():.3e}, max |bwd - f64| {(y2.double() - ref).abs().max().item():.3e}")

for setting in ('torch', 'triton'):
    runs = {}
    for mode, compiled in (('none', False), ('activation', False), ('activation', True)):
        torch.manual_seed(0)
        model = GPT(tiny_config('gpt2', bias=True), kernels=setting, device_type=device, recompute=mode).to(device)
        torch._dynamo.reset()
        stepped = torch.compile(model, backend='aot_eager') if compiled else model
        for micro_step in range(2):
            with torch.autocast(device, dtype=torch.bfloat16):
                _, loss = stepped(*batch(device, B=micro_step + 1))
            loss.backward()
        runs[mode, compiled] = {n: p.grad for n, p in model.named_parameters()}
    for key in (('activation', False), ('activation', True)):
        bad = [(n, (g - runs['none', False][n]).abs().max().item(), runs['none', False][n].abs().max().item())
               for n, g in runs[key].items() if not torch.equal(g, runs['none', False][n])]
        print(f"{setting} {key}: {len(bad)} gradients differ: " + "; ".join(f"{n} {d:.2e} (of {m:.2e})" for n, d, m in bad))
