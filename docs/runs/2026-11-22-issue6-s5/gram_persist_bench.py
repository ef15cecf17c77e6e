# Issue 6, session 5, call 3 (H100): gram_persistent.py's persistent gram kernels against the
# product kernel (kernels/newton_schulz.py) on the products of a GPT-2 Muon step; CUDA graphs
# of 10 calls, median us; max difference to the product kernel's result.
import sys, os, importlib
sys.path.insert(0, os.getcwd())
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_timing import graph_us  # noqa: E402
NS = importlib.import_module('kernels.newton_schulz')
GP = importlib.import_module('gram_persistent')

torch.manual_seed(0)
print(torch.cuda.get_device_name(), flush=True)
X1 = torch.randn(24, 768, 3072, device='cuda').bfloat16() / 60
X3 = torch.randn(12, 768, 768, device='cuda').bfloat16() / 30
A = NS.newton_schulz_gram(X1)
P = NS.newton_schulz_gram(A, 2.0, A, -4.7, 3.4)
a, b, c = NS.COEFFICIENTS
A12 = A[:12].contiguous()
cases = {'XXt 24x768x3072': (X1, {}), 'XXt 12x768x768': (X3, {}),
         'poly 24x768': (A, dict(alpha=c, C=A, beta=b, gamma=a)), 'poly 12x768': (A12, dict(alpha=c, C=A12, beta=b, gamma=a)),
         'A P^T 24x768': (A, dict(Y=P))}
VARIANTS = {'ptr 4w 3s 2/SM': dict(warps=4, stages=3, per_sm=2), 'ptr 8w 3s': dict(warps=8, stages=3, per_sm=1),
            'ptr 8w 4s': dict(warps=8, stages=4, per_sm=1), 'tma 8w 3s': dict(warps=8, stages=3, per_sm=1, tma=True),
            'tma 8w 4s': dict(warps=8, stages=4, per_sm=1, tma=True), 'tma 4w 3s 2/SM': dict(warps=4, stages=3, per_sm=2, tma=True)}
for name, (X, kw) in cases.items():
    ref = NS.newton_schulz_gram(X, **kw)
    base = graph_us(lambda: NS.newton_schulz_gram(X, **kw))
    line = [f"{name}: product kernel {base:.1f} us"]
    for vname, v in VARIANTS.items():
        try:
            got = GP.gram(X, **kw, **v)
            diff = (got.float() - ref.float()).abs().max().item()
            t = graph_us(lambda: GP.gram(X, **kw, **v))
            line.append(f"{vname} {t:.1f}{'' if diff == 0 else f' (max diff {diff:.1e})'}")
        except Exception as e:
            line.append(f"{vname} {type(e).__name__}: {str(e)[:100]}")
    print("; ".join(line), flush=True)
