# Issue 6, session 5, call 4 (H100): Newton-Schulz on GPT-2's three stacks with the wide stacks'
# steps grouped 3 + 2 (kernels/newton_schulz.py) against 2 + 2 + 1 (.devdata/newton_schulz_old.py =
# git show 7b2eb9b:kernels/newton_schulz.py), CUDA graphs of 10 calls, median us; max error against
# the float64 iteration on four kinds of spectra, with PyTorch's bf16 iteration's for the three-way rule.
import sys, os, importlib, importlib.util
sys.path.insert(0, os.getcwd())
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_timing import graph_us  # noqa: E402
NS = importlib.import_module('kernels.newton_schulz')
spec = importlib.util.spec_from_file_location('ns_old', '.devdata/newton_schulz_old.py')
OLD = importlib.util.module_from_spec(spec); spec.loader.exec_module(OLD)

def spectrum(kind, B, m, n):
    if kind == 'gauss':
        return torch.randn(B, m, n, device='cuda')
    U = torch.linalg.qr(torch.randn(B, m, m, device='cuda'))[0]
    V = torch.linalg.qr(torch.randn(B, n, m, device='cuda'))[0]
    if kind == 'logspread':
        s = 10 ** (-4 * torch.rand(B, m, device='cuda'))
    elif kind == 'lowrank':
        s = torch.full((B, m), 1e-3, device='cuda'); s[:, :16] = 1.0
    else:  # harmonic
        s = 1.0 / torch.arange(1, m + 1, device='cuda').float().expand(B, m)
    return (U * s[:, None, :]) @ V.mT

torch.manual_seed(0)
print(torch.cuda.get_device_name(), flush=True)
stacks = [torch.randn(12, 768, 768, device='cuda'), torch.randn(12, 2304, 768, device='cuda'),
          torch.randn(24, 768, 3072, device='cuda')]
for rnd in range(2):
    for label, mod in (('2 + 2 + 1', OLD), ('3 + 2', NS)):
        ts = [graph_us(lambda: mod.newton_schulz(s, backend='triton')) for s in stacks]
        print(f"newton_schulz, {label}: " + ", ".join(f"{tuple(s.shape)} {t:.0f} us" for s, t in zip(stacks, ts))
              + f"; sum {sum(ts):.0f} us", flush=True)
for m, n in ((768, 3072), (768, 2304)):
    for kind in ('gauss', 'logspread', 'lowrank', 'harmonic'):
        G = spectrum(kind, 4, m, n)
        ref = NS.newton_schulz_ref(G.double(), dtype=torch.float64)
        err = lambda X: (X.double() - ref).abs().max().item()
        print(f"{m}x{n} {kind}: max error vs fp64: torch bf16 {err(NS.newton_schulz_ref(G)):.2e}, "
              f"2 + 2 + 1 {err(OLD.newton_schulz(G, backend='triton')):.2e}, 3 + 2 {err(NS.newton_schulz(G, backend='triton')):.2e}",
              flush=True)
