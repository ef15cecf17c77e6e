# Issue 6, session 4 (H100; call 2, and call 3 with an argument): two Newton-Schulz steps as one for the wide stacks
# (kernels/newton_schulz.py, PAIR_FROM) and a CUDA stream per stack (muon.py), each on
# and off, in one run:
#   1. GPT-2's three stacks alone, newton_schulz in a CUDA graph, median us per call;
#   2. Muon's step alone (its graph replayed) and what it adds to the compiled training
#      step (train step minus forward+backward, as bench.py --optim measures it);
#   3. a profile of the new step: GPU time per kernel.
import sys, os, contextlib, importlib
sys.path.insert(0, os.getcwd())
import torch
import kernels
NS = importlib.import_module('kernels.newton_schulz')  # kernels.newton_schulz is the function
from muon import Muon
from model import GPT, GPTConfig
from kernels.choose import time_ms

torch.manual_seed(0)
print(torch.cuda.get_device_name(), flush=True)

def graph_us(fn, reps=20):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn(); fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(10):
            fn()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 100)  # us per call
    return sorted(ts)[reps // 2]

stacks = [torch.randn(12, 768, 768, device='cuda'), torch.randn(12, 2304, 768, device='cuda'),
          torch.randn(24, 768, 3072, device='cuda')]
for pair_from in (10**9, 2):
    NS.PAIR_FROM = pair_from
    t = [graph_us(lambda: kernels.newton_schulz(s, backend='triton')) for s in stacks]
    print(f"newton_schulz alone, {'pairs' if pair_from == 2 else 'single steps'}: "
          + ", ".join(f"{tuple(s.shape)} {u:.0f} us" for s, u in zip(stacks, t)) + f"; sum {sum(t):.0f} us", flush=True)
    err = [(kernels.newton_schulz(s, backend='triton').double() - NS.newton_schulz_ref(s.double(), dtype=torch.float64)).abs().max().item()
           for s in stacks]
    print("  max error vs fp64 iteration: " + ", ".join(f"{e:.2e}" for e in err), flush=True)
print("  torch bf16 iteration's max error vs fp64: " + ", ".join(
    f"{(NS.newton_schulz_ref(s).double() - NS.newton_schulz_ref(s.double(), dtype=torch.float64)).abs().max().item():.2e}" for s in stacks), flush=True)

model = GPT(GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, dropout=0.0, bias=False)).cuda()
X = torch.randint(50304, (12, 1024), device='cuda')
Y = torch.randint(50304, (12, 1024), device='cuda')
ctx = torch.autocast('cuda', torch.bfloat16)
SETTING = dict(lr=0.02, momentum=0.95, weight_decay=0.0, embed_lr=6e-4, scalar_lr=6e-4, backend='triton')

class Serial(Muon):  # every stack on the current stream, as before
    def _stack_streams(self, n):
        return [contextlib.nullcontext()] * n

compiled = torch.compile(model)
def fwd_bwd(m):
    with ctx:
        _, loss = m(X, Y)
    loss.backward()
fwd_bwd(model)
before = {n: p.detach().clone() for n, p in model.named_parameters()}
last = None
VARIANTS = [('before', 10**9, Serial), ('pairs', 2, Serial), ('streams', 10**9, Muon), ('pairs+streams', 2, Muon),
            ('before', 10**9, Serial), ('pairs+streams', 2, Muon)]
if len(sys.argv) > 1:  # call 3: the momentum kernel's sums of squares in every variant; pairs on or off
    VARIANTS = [(f"{n}, sums of squares from the momentum", pf, cls) for n, pf, cls in VARIANTS[:4] * 2]
for name, pair_from, cls in VARIANTS:
    NS.PAIR_FROM = pair_from
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda', muon=SETTING)
    opt = cls(opt.param_groups, momentum=0.95, betas=(0.9, 0.95), backend='triton')
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
    last = opt
    print(f"{name}: step alone {' '.join(f'{a:.3f}' for a in alone)} ms; train step {step:.2f}, forward+backward {fb:.2f} "
          f"-> optimizer adds {step - fb:.2f} ms ({100 * (step - fb) / step:.1f}%); replays {opt.graph_replays}", flush=True)

from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for _ in range(5):
        last.step()
    torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20, max_name_column_width=70))
