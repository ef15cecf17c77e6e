# Issue 6, session 5 (H100): the gram kernel with two blocks per program (one load of X's
# rows of block r for blocks (r, c1) and (r, c2); kernels/newton_schulz.py) against the one
# before (a block per program, the upper triangle's programs idle; .devdata/newton_schulz_old.py
# = git show 7b2eb9b:kernels/newton_schulz.py), over tile settings; CUDA graphs of 10 calls,
# median us (run with two_blocks.patch applied to kernels/newton_schulz.py; reverted after).
# Then newton_schulz on GPT-2's three stacks, old and new, with the error against the
# float64 iteration.
import sys, os, importlib, importlib.util
sys.path.insert(0, os.getcwd())
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_timing import graph_us  # noqa: E402
NS = importlib.import_module('kernels.newton_schulz')
spec = importlib.util.spec_from_file_location('ns_old', '.devdata/newton_schulz_old.py')
OLD = importlib.util.module_from_spec(spec); spec.loader.exec_module(OLD)

def with_settings(settings, fn):
    saved = NS.BLOCK_M, NS.BLOCK_K, NS.NUM_WARPS, NS.NUM_STAGES
    NS.BLOCK_M, NS.BLOCK_K, NS.NUM_WARPS, NS.NUM_STAGES = settings
    try:
        return fn()
    finally:
        NS.BLOCK_M, NS.BLOCK_K, NS.NUM_WARPS, NS.NUM_STAGES = saved

torch.manual_seed(0)
print(torch.cuda.get_device_name(), flush=True)
X1 = torch.randn(24, 768, 3072, device='cuda').bfloat16() / 60
X2 = torch.randn(12, 768, 2304, device='cuda').bfloat16() / 50
X3 = torch.randn(12, 768, 768, device='cuda').bfloat16() / 30
A = OLD.newton_schulz_gram(X1)
P = OLD.newton_schulz_gram(A, 2.0, A, -4.7, 3.4)
a, b, c = NS.COEFFICIENTS
A12 = A[:12].contiguous()
cases = {'XXt 24x768x3072': (X1, {}), 'XXt 12x768x2304': (X2, {}), 'XXt 12x768x768': (X3, {}),
         'poly 24x768': (A, dict(alpha=c, C=A, beta=b, gamma=a)), 'poly 12x768': (A12, dict(alpha=c, C=A12, beta=b, gamma=a)),
         'A P^T 24x768': (A, dict(Y=P))}
SETTINGS = [(128, 64, 8, 3), (128, 64, 8, 2), (128, 64, 8, 4), (128, 128, 8, 2), (64, 64, 4, 3)]
for name, (X, kw) in cases.items():
    ref = OLD.newton_schulz_gram(X, **kw)
    base = graph_us(lambda: OLD.newton_schulz_gram(X, **kw))
    M, K = X.shape[1], X.shape[2]
    tflop = X.shape[0] * M * (M + 128) * K / 1e12  # the 21 of 36 blocks of 128 computed, as TFLOP
    line = [f"{name}: before {base:.1f} us ({tflop / base * 1e6:.0f} TFLOP/s)"]
    for st in SETTINGS:
        try:
            got = with_settings(st, lambda: NS.newton_schulz_gram(X, **kw))
            diff = (got.float() - ref.float()).abs().max().item()
            t = with_settings(st, lambda: graph_us(lambda: NS.newton_schulz_gram(X, **kw)))
            line.append(f"{'/'.join(map(str, st))} {t:.1f}{'' if diff == 0 else f' (max diff {diff:.1e})'}")
        except Exception as e:
            line.append(f"{'/'.join(map(str, st))} {type(e).__name__}: {str(e)[:80]}")
    print("; ".join(line), flush=True)

stacks = [torch.randn(12, 768, 768, device='cuda'), torch.randn(12, 2304, 768, device='cuda'),
          torch.randn(24, 768, 3072, device='cuda')]
for label, mod in (('before', OLD), ('two blocks per program', NS)):
    ts = [graph_us(lambda: mod.newton_schulz(s, backend='triton')) for s in stacks]
    errs = [(mod.newton_schulz(s, backend='triton').double() - NS.newton_schulz_ref(s.double(), dtype=torch.float64)).abs().max().item()
            for s in stacks]
    print(f"newton_schulz, {label}: " + ", ".join(f"{tuple(s.shape)} {t:.0f} us" for s, t in zip(stacks, ts))
          + f"; sum {sum(ts):.0f} us; max error vs fp64 " + ", ".join(f"{e:.2e}" for e in errs), flush=True)
