# Muon's step for GPT-2 124M (H100): can its memory-bound parts (AdamW on the embeddings,
# the momentum and the apply of each stack) run beside the compute-bound Newton-Schulz?
# Variants (subclasses of muon.Muon, the same kernels, only the streams differ):
#   A  as muon.py: AdamW after the Muon group, each stack momentum -> NS -> apply in turn
#   B  AdamW on a side stream, beside the Muon group
#   C  B, and each stack's apply on the side stream (beside the next stack's NS)
#   D  C, and each stack's momentum on the side stream ahead of its NS
# Times: optimizer.step() (Muon's graph replayed), median of 50 after warm-up; and one
# forward+backward+step of the compiled model, median of 30.
import sys, os
sys.path.insert(0, os.getcwd())
import torch
import kernels
from muon import Muon
from model import GPT, GPTConfig
from kernels.choose import time_ms

torch.manual_seed(0)
model = GPT(GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_embd=768, dropout=0.0, bias=False)).cuda()
X = torch.randint(50304, (12, 1024), device='cuda')
Y = torch.randint(50304, (12, 1024), device='cuda')
ctx = torch.autocast('cuda', torch.bfloat16)
SETTING = dict(lr=0.02, momentum=0.95, weight_decay=0.0, embed_lr=6e-4, scalar_lr=6e-4, backend='triton')


class Overlapped(Muon):
    mode = 'A'

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.side = torch.cuda.Stream()

    @torch.no_grad()
    def step(self, closure=None):
        if self.mode == 'A':
            return super().step(closure)
        main = torch.cuda.current_stream()
        self.side.wait_stream(main)
        for group in self.param_groups:  # AdamW first: its launches go out before the Muon graph's
            params = [p for p in group['params'] if p.grad is not None]
            if params and not group['muon']:
                with torch.cuda.stream(self.side):
                    self._adamw_step(group, params)
        for group in self.param_groups:
            params = [p for p in group['params'] if p.grad is not None]
            if params and group['muon']:
                self._muon_step(group, params)
        main.wait_stream(self.side)

    def _muon_update(self, stacks, group, lr):
        if self.mode in 'AB':
            return super()._muon_update(stacks, group, lr)
        main, side = torch.cuda.current_stream(), self.inner
        side.wait_stream(main)
        momentum = lambda members: kernels.muon_momentum([p.grad for p in members],
                                                         [self.state[p]['momentum_buffer'] for p in members],
                                                         group['momentum'], group['nesterov'], backend=self.backend)
        if self.mode == 'D':
            Us, done = [], []
            with torch.cuda.stream(side):
                for members in stacks:
                    Us.append(momentum(members))
                    Us[-1].record_stream(main)
                    done.append(torch.cuda.Event())
                    done[-1].record(side)
        for k, members in enumerate(stacks):
            if self.mode == 'D':
                main.wait_event(done[k])
                U = Us[k]
            else:
                U = momentum(members)
            O = self._orthogonalise(U, group['ns_steps'])
            O.record_stream(side)
            side.wait_stream(main)
            with torch.cuda.stream(side):
                kernels.muon_apply(members, O, lr, group['weight_decay'], backend=self.backend)
        main.wait_stream(side)


def make(mode):
    Overlapped.mode = mode
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda', muon=SETTING)
    o = Overlapped(opt.param_groups, momentum=0.95, betas=(0.9, 0.95), backend='triton')
    o.inner = torch.cuda.Stream()
    return o


print(torch.cuda.get_device_name(), flush=True)
compiled = torch.compile(model)

def fwd_bwd(m):
    with ctx:
        _, loss = m(X, Y)
    loss.backward()

fwd_bwd(model)
before = {n: p.detach().clone() for n, p in model.named_parameters()}
results = {}
for mode in 'ABCDA':
    opt = make(mode)
    for n, p in model.named_parameters():
        p.data.copy_(before[n])
    opt.step()
    after = torch.cat([p.detach().flatten() for p in model.parameters()])
    if mode == 'A' and 'ref' not in results:
        results['ref'] = after
    same = torch.equal(after, results['ref'])
    alone = [time_ms(opt.step, 50, warmup=5) for _ in range(2)]

    def train_step():
        fwd_bwd(compiled)
        opt.step()
        opt.zero_grad(set_to_none=True)
    step = time_ms(train_step, 30, warmup=10)
    fb = time_ms(lambda: (fwd_bwd(compiled), model.zero_grad(set_to_none=True)), 30, warmup=3)
    fwd_bwd(model)
    print(f"{mode}: step alone {' '.join(f'{a:.3f}' for a in alone)} ms; train step {step:.2f} ms, forward+backward {fb:.2f} "
          f"-> optimizer adds {step - fb:.2f} ms ({100 * (step - fb) / step:.1f}%); replays {opt.graph_replays}; "
          f"first step's weights {'bitwise equal to A' if same else 'DIFFER from A'}", flush=True)
