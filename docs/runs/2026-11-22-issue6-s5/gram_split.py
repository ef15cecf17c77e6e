# Issue 6, session 5, call 2 (H100): is the chain of 768 x 768 products bound by memory traffic
# that L2 could hold? 1. the gram kernel's 768^3 products timed warm (the same inputs call after
# call, as the sweeps so far did) and cold (8 input sets in turn, more than L2 holds);
# 2. newton_schulz on GPT-2's stacks whole and in sub-stacks (a (24, 768, 768) Gram matrix is
# 28 MB, the H100's L2 50 MB); 3. the same splits inside Muon's step: the step alone and what it
# adds to the compiled training step (as bench.py --optim measures it), variants in turn, twice;
# each also with programmatic dependent launch (PDL) of the gram kernels.
import sys, os, importlib
sys.path.insert(0, os.getcwd())
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_timing import graph_us  # noqa: E402
import kernels
NS = importlib.import_module('kernels.newton_schulz')
from muon import Muon
from model import GPT, GPTConfig
from kernels.choose import time_ms

torch.manual_seed(0)
print(torch.cuda.get_device_name(), flush=True)
a, b, c = NS.COEFFICIENTS
for B in (24, 12):
    As = [NS.newton_schulz_gram(torch.randn(B, 768, 3072, device='cuda').bfloat16() / 60) for _ in range(8)]
    warm = graph_us(lambda: NS.newton_schulz_gram(As[0], alpha=c, C=As[0], beta=b, gamma=a))
    it = iter(range(10**9))
    cold = graph_us(lambda: (lambda A: NS.newton_schulz_gram(A, alpha=c, C=A, beta=b, gamma=a))(As[next(it) % 8]))
    print(f"a I + b A + c A A, ({B}, 768, 768): warm {warm:.1f} us, cold {cold:.1f} us", flush=True)

# the gram kernel with programmatic dependent launch: its programs are placed while the kernel before
# finishes and wait (griddepcontrol.wait) before touching memory
src = open(NS.__file__).read()
start = src.index('@triton.jit\ndef _newton_schulz_gram_kernel(')
body = src[start:src.index('# tiles measured', start)]
body = body.replace('    ti, tj = tl.program_id(0), tl.program_id(1)\n', '    gdc_wait()\n    gdc_launch_dependents()\n    ti, tj = tl.program_id(0), tl.program_id(1)\n')
with open('/tmp/gram_pdl.py', 'w') as f:  # triton.jit reads a kernel's source from its file
    f.write('import triton\nimport triton.language as tl\nfrom triton.language.extra.cuda import gdc_wait, gdc_launch_dependents\n\n'
            + body.replace('def _newton_schulz_gram_kernel(', 'def gram_pdl('))
sys.path.insert(0, '/tmp')
gram_pdl = importlib.import_module('gram_pdl').gram_pdl
PLAIN = NS._newton_schulz_gram_kernel
class WithPDL:
    def __getitem__(self, grid):
        return lambda *args, **kw: gram_pdl[grid](*args, launch_pdl=True, **kw)
def use_pdl(on):
    NS._newton_schulz_gram_kernel = WithPDL() if on else PLAIN

def split_ns(X, steps=5, backend='triton', sumsq=None, size=None):
    if size is None or len(X) <= size:
        return kernels.newton_schulz(X, steps, backend=backend, sumsq=sumsq)
    return torch.cat([kernels.newton_schulz(x, steps, backend=backend, sumsq=None if sumsq is None else s)
                      for x, s in zip(X.split(size), (X if sumsq is None else sumsq).split(size))])

stacks = [torch.randn(12, 768, 768, device='cuda'), torch.randn(12, 2304, 768, device='cuda'),
          torch.randn(24, 768, 3072, device='cuda')]
for size, pdl in ((None, False), (12, False), (8, False), (6, False), (None, True), (12, True)):
    use_pdl(pdl)
    ts = [graph_us(lambda: split_ns(s, size=size)) for s in stacks]
    print(f"newton_schulz in sub-stacks of {size or 'all'}{', PDL' if pdl else ''}: " + ", ".join(f"{tuple(s.shape)} {t:.0f} us" for s, t in zip(stacks, ts))
          + f"; sum {sum(ts):.0f} us", flush=True)

model = GPT(GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, dropout=0.0, bias=False)).cuda()
X = torch.randint(50304, (12, 1024), device='cuda')
Y = torch.randint(50304, (12, 1024), device='cuda')
ctx = torch.autocast('cuda', torch.bfloat16)
SETTING = dict(lr=0.02, momentum=0.95, weight_decay=0.0, embed_lr=6e-4, scalar_lr=6e-4, backend='triton')
SIZE = None

class Split(Muon):
    def _orthogonalise(self, U, sumsq, steps):
        return split_ns(U, steps, self.backend, sumsq, SIZE)

compiled = torch.compile(model)
def fwd_bwd(m):
    with ctx:
        _, loss = m(X, Y)
    loss.backward()
fwd_bwd(model)
before = {n: p.detach().clone() for n, p in model.named_parameters()}
for SIZE, pdl in [(None, False), (12, False), (None, True), (12, True)] * 2:
    use_pdl(pdl)
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda', muon=SETTING)
    opt = Split(opt.param_groups, momentum=0.95, betas=(0.9, 0.95), backend='triton')
    for n, p in model.named_parameters():
        p.data.copy_(before[n])
    alone = [time_ms(opt.step, 50, warmup=5) for _ in range(2)]
    def train_step():
        fwd_bwd(compiled)
        opt.step()
        opt.zero_grad(set_to_none=True)
    step = time_ms(train_step, 30, warmup=10)
    fb = time_ms(lambda: (fwd_bwd(compiled), model.zero_grad(set_to_none=True)), 30, warmup=3)
    fwd_bwd(model)
    print(f"sub-stacks of {SIZE or 'all'}{', PDL' if pdl else ''}: step alone {' '.join(f'{a:.3f}' for a in alone)} ms; train step {step:.2f}, "
          f"forward+backward {fb:.2f} -> optimizer adds {step - fb:.2f} ms ({100 * (step - fb) / step:.1f}%); "
          f"replays {opt.graph_replays}", flush=True)
