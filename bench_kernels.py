"""
Each op alone, for `python bench.py --kernels` (and `--tune`): the forward, the backward
and both of every Triton kernel against PyTorch eager and torch.compile (attention also
against SDPA's flash and cuDNN backends and a naive attention; the loss against Liger's
fused one when installed), at the model's shapes and over sweeps:
- the norms and the MLP activations: widths 256 to 32768 at 4096 rows (Triton's LayerNorm
  study sweeps the same way);
- rotary and attention: T from 512 to 8192 at 16k tokens, head dims 64 and 128 (16
  heads: 8x16x2048x64 and 4x16x4096x128 are issue 4's shapes);
- the fused linear + cross-entropy: the vocabulary, from 8192 to 131072;
- the row-wise fp8 cast (forward only: no gradient): widths 256 to 16384 at 4096 rows.
Per implementation and pass: GPU time (a CUDA graph of 10 calls, median of 10 replays)
and time per call in an eager loop (launch overhead included), GB/s of minimum traffic
(TFLOP/s for attention and the loss), the peak memory one call allocates, and the largest
error against float64 (outputs on the forward's row, gradients on the backward's).
Inputs rotate among copies that overflow the 50 MB L2 cache, so bandwidth is DRAM's.
Writes kernels.csv, kernels.json and one PNG per op and sweep into bench.py's bench_dir.
"""
import os
import csv
import json
import math
import functools
import itertools
import importlib.util
from dataclasses import dataclass

import torch
import torch.nn.functional as F
import torch._functorch.config
from torch.nn.attention import SDPBackend, sdpa_kernel

import kernels
from kernels.choose import time_ms, graph_ms, peak_mib
from configurator import fail
from kernels.rotary import rotary_tables
from kernels.linear_cross_entropy import model_chunk_bytes
from kernels.rowwise_fp8 import MAX_WIDTH as FP8_MAX_WIDTH

PASSES = ('fwd', 'bwd', 'fwdbwd')
cuda = torch.cuda.is_available()


def sweep_sizes():
    """The sweeps' axes: on a GPU the issue's; on a CPU (the Triton interpreter is slow)
    small ones that still include widths and lengths that are not powers of two."""
    if cuda:
        return dict(rows=4096, widths=[2 ** i for i in range(8, 16)], tokens=16384, seqs=[512, 1024, 2048, 4096, 8192],
                    heads=16, head_dims=[64, 128], ce_rows=8192, vocabs=[8192, 32768, 50304, 131072])
    return dict(rows=32, widths=[64, 200], tokens=80, seqs=[16, 40],
                heads=2, head_dims=[16], ce_rows=32, vocabs=[65, 300])


@dataclass
class Case:
    op: str             # the op, as the tables name it
    shape: str          # its shape, as printed
    make: object        # () -> the inputs; those that require grad are differentiated
    fn: object          # backend -> f(*inputs) -> output(s), backend 'triton' or 'torch' (the reference)
    work: tuple         # the forward's and the backward's minimum bytes moved, or FLOPs where unit is TFLOP/s
    unit: str = 'GB/s'
    sweep: str = None   # the plot this case is a point of; None at the model's shapes
    x: int = None       # its place on the plot's axis
    axis: str = None    # the axis's name
    check_one: bool = False  # check the error on the first batch element alone (attention: the elements are
                             # independent, and float64 T x T scores of the whole batch overflow the GPU)
    passes: tuple = PASSES  # ('fwd',) for an op without a gradient


class CaseMaker:
    """Each op's Case at given sizes, in one dtype on one device."""

    def __init__(self, dtype, device):
        self.dtype, self.device, self.es = dtype, device, torch.finfo(dtype).bits // 8

    def act(self, *shape):
        return torch.randn(*shape, device=self.device, dtype=self.dtype, requires_grad=True)

    def param(self, n):  # weights in the activations' dtype: PyTorch's eager LayerNorm takes no mixed dtypes
        return (1 + 0.1 * torch.randn(n, device=self.device, dtype=self.dtype)).requires_grad_()

    def norm(self, op, M, N, **plot):
        rms, residual = op.startswith('rms'), op.endswith('residual')
        f = kernels.rms_norm if rms else kernels.layer_norm
        weights = [self.param(N)] if rms else [self.param(N), self.param(N)]
        if residual:  # the model's call: the sublayer's output u and the stream x, (norm(x + u), x + u)
            make = lambda: [self.act(M, N), self.act(M, N)] + [w.detach().clone().requires_grad_() for w in weights]
            fn = lambda be: lambda u, x, *w: f(u, *w, residual=x, backend=be)
            return Case(op, f"{M}x{N}", make, fn, (4 * M * N * self.es, 4 * M * N * self.es), **plot)
        make = lambda: [self.act(M, N)] + [w.detach().clone().requires_grad_() for w in weights]
        return Case(op, f"{M}x{N}", make, lambda be: lambda x, *w: f(x, *w, backend=be),
                    (2 * M * N * self.es, 3 * M * N * self.es), **plot)

    def gelu(self, M, N, **plot):
        return Case('gelu', f"{M}x{N}", lambda: [self.act(M, N)], lambda be: lambda h: kernels.gelu(h, backend=be),
                    (2 * M * N * self.es, 3 * M * N * self.es), **plot)

    def swiglu(self, M, N, **plot):  # gate and up: the two halves of one projection, as in the model
        return Case('swiglu', f"{M}x{N}", lambda: [self.act(M, 2 * N)],
                    lambda be: lambda fc: kernels.swiglu(fc, backend=be),
                    (3 * M * N * self.es, 5 * M * N * self.es), **plot)

    def rotary(self, B, H, Hkv, T, D, packed=False, **plot):
        """q and k: one (B, H + Hkv, T, D) view of the qkv projection; packed: the LLaMA model's
        call, rotary_qkv on the projection, q and k turned and v copied into one tensor of its layout."""
        cos, sin = (t.to(self.device) for t in rotary_tables(D, T))
        n = B * (H + 2 * Hkv if packed else H + Hkv) * T * D * self.es
        f = (lambda be: lambda qkv, c, s: kernels.rotary_qkv(qkv, H + Hkv, c, s, backend=be)) if packed else (
            lambda be: lambda qkv, c, s: kernels.rotary(qkv.transpose(1, 2)[:, :H + Hkv], c, s, backend=be))
        return Case('rotary qkv' if packed else 'rotary', f"{B}x{H}+{Hkv}x{T}x{D}",
                    lambda: [self.act(B, T, H + 2 * Hkv, D), cos, sin], f, (2 * n, 2 * n), **plot)

    def attention(self, B, H, Hkv, T, D, packed=False, **plot):
        """q, k, v apart (SDPA's signature); packed: the model's call, flash_attention_qkv on one
        (B, T, H + 2 Hkv, D) projection, its gradient returned whole."""
        flops = 4 * B * H * T * T * D * 0.5  # QK^T and PV, causal: half; the backward's five matmuls: 2.5x
        make = (lambda: [self.act(B, T, H + 2 * Hkv, D)]) if packed else (
            lambda: [self.act(B, H, T, D), self.act(B, Hkv, T, D), self.act(B, Hkv, T, D)])
        f = (lambda be: lambda qkv: kernels.flash_attention_qkv(qkv, H, causal=True, backend=be)) if packed else (
            lambda be: lambda q, k, v: kernels.flash_attention(q, k, v, causal=True, backend=be))
        return Case('attention qkv' if packed else 'attention',
                    f"{B}x{H}" + (f"/{Hkv}" if Hkv != H else '') + f"x{T}x{D}",
                    make, f, (flops, 2.5 * flops), 'TFLOP/s', check_one=True, **plot)

    def cross_entropy(self, N, C, V, chunk_bytes=None, **plot):
        # the LM head's matmul and the loss; the weight in the activations' dtype (its cast not timed)
        return Case('cross_entropy',
                    f"{N}x{C} V={V}" + (f", {chunk_bytes / 2**20:g} MiB chunks" if chunk_bytes is not None else ''),
                    lambda: [self.act(N, C),
                             (torch.randn(V, C, device=self.device) * C ** -0.5).to(self.dtype).requires_grad_(),
                             torch.randint(V, (N,), device=self.device)],
                    lambda be: lambda x, w, y: kernels.linear_cross_entropy(x, w, y, chunk_bytes=chunk_bytes,
                                                                            backend=be),
                    (2 * N * C * V, 4 * N * C * V), 'TFLOP/s', **plot)

    def rowwise_fp8(self, M, N, **plot):  # as the fp8 products cast x, dy and the weights: no gradient
        return Case('rowwise_fp8', f"{M}x{N}", lambda: [self.act(M, N).detach()],
                    lambda be: lambda x: kernels.rowwise_fp8(x, backend=be), (M * N * (self.es + 1) + 4 * M,),
                    passes=('fwd',), **plot)


def chosen_cases(sizes, dtype, device, only_ops=''):
    """model_and_sweep_cases of the ops in only_ops (comma-separated; '' for all); an op it lacks is an error."""
    cases = model_and_sweep_cases(*sizes, dtype, device)
    ops = dict.fromkeys(c.op for c in cases)
    if unknown := [op for op in only_ops.split(',') if op and op not in ops]:
        fail(f"kernel_ops {unknown} are not among {list(ops)}")
    return [c for c in cases if not only_ops or c.op in only_ops.split(',')]


def model_and_sweep_cases(batch_size, block_size, n_embd, n_head, n_kv_head, vocab_size, swiglu_hidden, dtype, device):
    """Every op at the model's shapes (both architectures' ops: B*T rows of n_embd, the MLP's
    hidden width, the heads), then along the sweeps."""
    make = CaseMaker(dtype, device)
    norm, gelu, swiglu, rotary, attention, cross_entropy, rowwise_fp8 = (
        make.norm, make.gelu, make.swiglu, make.rotary, make.attention, make.cross_entropy, make.rowwise_fp8)
    M, C, hkv = batch_size * block_size, n_embd, n_kv_head
    cases = [norm(op, M, C) for op in ('layer_norm', 'layer_norm + residual', 'rms_norm', 'rms_norm + residual')]
    cases += [gelu(M, 4 * C), swiglu(M, swiglu_hidden), rotary(batch_size, n_head, hkv, block_size, C // n_head),
              rotary(batch_size, n_head, hkv, block_size, C // n_head, packed=True),
              attention(batch_size, n_head, hkv, block_size, C // n_head),
              attention(batch_size, n_head, hkv, block_size, C // n_head, packed=True), cross_entropy(M, C, vocab_size),
              # the op's default chunk, and the model's without recompute
              cross_entropy(M, C, vocab_size, model_chunk_bytes(vocab_size, lean=False))]
    cases += [rowwise_fp8(M, n) for n in (C, 3 * C, 4 * C)]  # GPT-2's block products' inputs and gradients
    s = sweep_sizes()
    for N in s['widths']:
        width = lambda op: dict(sweep=op, x=N, axis='width')
        cases += [norm(op, s['rows'], N, **width(op))
                  for op in ('layer_norm', 'layer_norm + residual', 'rms_norm', 'rms_norm + residual')]
        cases += [gelu(s['rows'], N, **width('gelu')), swiglu(s['rows'], N, **width('swiglu'))]
        cases += [rowwise_fp8(s['rows'], N, **width('rowwise_fp8'))] if N <= FP8_MAX_WIDTH else []
    for D in s['head_dims']:
        for T in s['seqs']:
            B, H = s['tokens'] // T, s['heads']
            cases += [rotary(B, H, H, T, D, sweep=f"rotary d{D}", x=T, axis='T'),
                      attention(B, H, H, T, D, sweep=f"attention d{D}", x=T, axis='T')]
    cases += [cross_entropy(s['ce_rows'], C, V, sweep='cross_entropy', x=V, axis='V') for V in s['vocabs']]
    return cases


# implementations beyond the Triton kernel, PyTorch (eager, compiled) ---------------

@functools.lru_cache(maxsize=None)
def future_mask(T, device):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(1)

def attention_naive(q, k, v):
    """Causal attention as nanoGPT writes it without SDPA: the (T, T) scores materialised,
    softmax in fp32; k and v repeated for grouped-query heads."""
    if k.shape[1] != q.shape[1]:
        k, v = (t.repeat_interleave(q.shape[1] // k.shape[1], dim=1) for t in (k, v))
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, H, T, T)
    att = att.masked_fill(future_mask(q.shape[2], q.device), float('-inf'))
    return F.softmax(att.float(), dim=-1).to(q.dtype) @ v

def sdpa_with(backend):
    """SDPA held to one of its backends, to name what its default choice is up against."""
    def attend(q, k, v):
        with sdpa_kernel(backend):
            return kernels.flash_attention_ref(q, k, v, causal=True)
    return attend

def liger_linear_ce():
    """Liger-Kernel's fused linear cross-entropy, if installed (pip install liger-kernel)."""
    try:
        from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction
    except ImportError:
        return None
    return lambda x, w, y: LigerFusedLinearCrossEntropyFunction.apply(x, w, y)[0]

def implementations(case):
    """{name: f(*inputs)} for the case: triton, torch, compile (on a GPU) and the rivals."""
    impls = dict(triton=case.fn('triton'), torch=case.fn('torch'))
    if cuda:
        torch._dynamo.reset()  # each case compiles afresh: the sweep's shapes would pass the recompile limit
        impls['compile'] = torch.compile(case.fn('torch'), dynamic=False)
        if case.op == 'attention':
            impls.update({'sdpa flash': sdpa_with(SDPBackend.FLASH_ATTENTION),
                          'sdpa cudnn': sdpa_with(SDPBackend.CUDNN_ATTENTION),
                          'naive': attention_naive})
        liger = liger_linear_ce() if case.op == 'cross_entropy' else None
        if liger:
            impls['liger'] = liger
    elif case.op == 'attention':
        impls['naive'] = attention_naive
    return impls


# measuring ------------------------------------------------------------------------

def copy_GBps():
    """The copy ceiling measured here, bytes read + written per second over 1 GiB: the better
    of a device copy (cudaMemcpy) and an elementwise kernel (torch.neg), which on the H200
    outruns the memcpy."""
    if not cuda:
        return None
    src = torch.randn(2 ** 29, dtype=torch.bfloat16, device='cuda')
    dst = torch.empty_like(src)
    best_ms = min(graph_ms(lambda: dst.copy_(src), calls=5), graph_ms(lambda: torch.neg(src, out=dst), calls=5))
    return 2 * src.numel() * 2 / best_ms / 1e6

def as_tuple(y):
    return y if isinstance(y, tuple) else (y,)

def differentiable(inputs):
    return [t for t in inputs if torch.is_tensor(t) and t.requires_grad]

def errors(f, ref, inputs, dys, check_one):
    """{pass: max |f - float64 reference|}: 'fwd' over the outputs and, where there are output
    gradients dys, 'bwd' over the gradients and 'fwdbwd' over both, for these inputs (their
    first batch element alone if check_one); the reference is `ref` on float64 copies."""
    if check_one:
        inputs = [t[:1].detach().requires_grad_(t.requires_grad) for t in inputs]
        dys = [d[:1] for d in dys]

    def run(g, xs, ds):
        ys = as_tuple(g(*xs))
        return ys, torch.autograd.grad(ys, differentiable(xs), ds) if ds else ()
    wide = [t.detach().double().requires_grad_() if torch.is_tensor(t) and t.is_floating_point() and t.requires_grad
            else t.double() if torch.is_tensor(t) and t.is_floating_point() else t for t in inputs]
    got, want = run(f, inputs, dys), run(ref, wide, [d.double() for d in dys])
    out_err, grad_err = (max(((a.double() - b.double()).abs().max().item() for a, b in zip(g, w)), default=None)
                         for g, w in zip(got, want))
    return dict(fwd=out_err) if grad_err is None else dict(fwd=out_err, bwd=grad_err, fwdbwd=max(out_err, grad_err))

# the backward alone runs more than once on one forward (retain_graph): compiled backwards
# must not reuse the forward's buffers for it (only here: bench.py's training steps keep it)
@torch._functorch.config.patch(donated_buffer=False)
def bench_case(case, impls, check=True):
    """[row] per implementation and pass: dict(op, shape, sweep, axis, x, impl, pass, gpu_ms,
    call_ms, rate, unit, peak_mib, max_err). A failing implementation (one that refuses the
    inputs, or Triton where it cannot run) gets a row of None and a printed line."""
    first = case.make()
    with torch.no_grad():
        outs = as_tuple(case.fn('torch')(*first))
    size = (sum(t.numel() * t.element_size() for t in first if torch.is_tensor(t))
            + sum(o.numel() * o.element_size() for o in outs))
    copies = max(2, -(-200 * 2 ** 20 // size)) if cuda else 1
    inputs = [first] + [case.make() for _ in range(copies - 1)]
    dys = [[torch.randn_like(o) for o in outs] if 'bwd' in case.passes else [] for _ in range(copies)]
    rows = []
    for impl, f in impls.items():
        err = {}
        for pass_ in case.passes:
            saved, calls = {}, itertools.count()

            def prepare():  # the backward alone: every copy's forward, kept for it
                for k in range(copies):
                    saved[k] = as_tuple(f(*inputs[k]))

            def run():
                k = next(calls) % copies
                ys = saved[k] if pass_ == 'bwd' else as_tuple(f(*inputs[k]))
                if pass_ != 'fwd':
                    torch.autograd.grad(ys, differentiable(inputs[k]), dys[k], retain_graph=pass_ == 'bwd')

            try:
                if pass_ == 'fwd' and check:
                    err = errors(f, case.fn('torch'), first, dys[0], case.check_one)
                gpu = graph_ms(run, prepare=prepare if pass_ == 'bwd' else None)
                if pass_ == 'bwd':
                    prepare()
                call, peak = time_ms(run, 20, warmup=3) if cuda else time_ms(run, 2, warmup=1), peak_mib(run)
            except Exception as e:
                print(f"    {impl} {pass_}: {type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}")
                gpu = call = peak = None
            work = case.work[0] if pass_ == 'fwd' else case.work[1] if pass_ == 'bwd' else sum(case.work)
            t = gpu or call
            rows.append(dict(op=case.op, shape=case.shape, sweep=case.sweep, axis=case.axis, x=case.x, impl=impl,
                             **{'pass': pass_}, gpu_ms=gpu, call_ms=call,
                             rate=t and work / t / (1e6 if case.unit == 'GB/s' else 1e9), unit=case.unit, peak_mib=peak,
                             max_err=None if call is None else err.get(pass_)))
            saved.clear()
    return rows


# the sweep: tables, CSV, JSON, plots -----------------------------------------------

def print_case(rows, ceiling):
    """One line per pass: the three main implementations' times, Triton's rate and speedups,
    peak memory, errors; the rivals' times at the end."""
    us = lambda r: 'n/a' if r is None or r['call_ms'] is None else f"{(r['gpu_ms'] or r['call_ms']) * 1e3:.1f}"
    for pass_ in dict.fromkeys(r['pass'] for r in rows):
        by = {r['impl']: r for r in rows if r['pass'] == pass_}
        k, t, c = by['triton'], by['torch'], by.get('compile')
        ms = lambda r: r and (r['gpu_ms'] or r['call_ms'])
        ratio = lambda r: f"{ms(r) / ms(k):.2f}x" if ms(r) and ms(k) else 'n/a'
        rate = 'n/a' if k['rate'] is None else f"{k['rate']:,.0f} {k['unit']}" + (
            f" ({100 * k['rate'] / ceiling:.0f}%)" if ceiling and k['unit'] == 'GB/s' else '')
        mem = lambda r: 'n/a' if r is None or r['peak_mib'] is None else f"{r['peak_mib']:,.0f}"
        err = lambda r: 'n/a' if r is None or r['max_err'] is None else f"{r['max_err']:.1e}"
        others = ', '.join(f"{i} {us(r)}" for i, r in by.items() if i not in ('triton', 'torch', 'compile'))
        print(f"  {pass_:>6}  torch {us(t):>8}  compile {us(c):>8}  triton {us(k):>8} us  {rate:>20}  "
              f"vs torch {ratio(t):>6}  vs compile {ratio(c):>6}  peak MiB {mem(k)}/{mem(t)}/{mem(c)}  "
              f"err {err(k)}/{err(t)}" + (f"  | {others} us" if others else ''))

CSV_COLUMNS = ['op', 'shape', 'sweep', 'axis', 'x', 'impl', 'pass',
               'gpu_ms', 'call_ms', 'rate', 'unit', 'peak_mib', 'max_err']

def write_csv(path, rows):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for r in rows:
            w.writerow(['' if r[c] is None else r[c] for c in CSV_COLUMNS])

def plot(path, sweep, rows, ceiling, title):
    """Rate against the sweep's axis, one panel per pass, one line per implementation."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    passes = list(dict.fromkeys(r['pass'] for r in rows))
    fig, axes = plt.subplots(1, len(passes), figsize=(5.3 * len(passes), 4.5), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, pass_ in zip(axes, passes):
        for impl in dict.fromkeys(r['impl'] for r in rows):
            pts = [(r['x'], r['rate']) for r in rows if r['impl'] == impl and r['pass'] == pass_ and r['rate']]
            if pts:
                ax.plot(*zip(*pts), marker='o', label=impl, linewidth=2.5 if impl == 'triton' else 1.2)
        if ceiling and rows[0]['unit'] == 'GB/s':
            ax.axhline(ceiling, color='gray', linestyle='--', label='copy ceiling')
        ax.set_xscale('log', base=2)
        ax.set_xlabel(rows[0]['axis'])
        ax.set_title({'fwd': 'forward', 'bwd': 'backward', 'fwdbwd': 'forward + backward'}[pass_])
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(rows[0]['unit'])
    axes[-1].legend(fontsize=8)
    fig.suptitle(f"{sweep}: {title}")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)

def sweep(sizes, dtype, device, out_dir, only_ops='', header=None):
    """The --kernels run: every case, printed as it goes; CSV, JSON and PNGs in out_dir."""
    cases = chosen_cases(sizes, dtype, device, only_ops)
    ceiling = copy_GBps()
    print(f"{len(cases)} cases; per pass: us of GPU time (CUDA graph; eager time per call without CUDA), Triton's "
          f"rate" + (f" (% of the {ceiling:,.0f} GB/s copy measured here)" if ceiling else '')
          + ", its speedups, peak MiB triton/torch/compile, max error vs float64 triton/torch", flush=True)
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for i, case in enumerate(cases):
        print(f"[{i + 1}/{len(cases)}] {case.op} {case.shape}"
              + ('' if case.sweep is None else f" ({case.sweep} sweep)"), flush=True)
        case_rows = bench_case(case, implementations(case))
        print_case(case_rows, ceiling)
        rows += case_rows
        write_csv(os.path.join(out_dir, 'kernels.csv'), rows)  # after each case: a cut-off run keeps what it measured
    autotuned = {name: {f"head dim {d} {k}": str(c) for d, tuned in getattr(kernels.attention, name).items()
                        for k, c in tuned.cache.items()}
                 for name in ('_fwd_tuned', '_dkdv_tuned', '_dq_tuned')} if cuda else {}
    with open(os.path.join(out_dir, 'kernels.json'), 'w') as f:
        json.dump(dict(header or {}, copy_GBps=ceiling, rows=rows, attention_autotuned=autotuned), f, indent=1)
    written = ['kernels.csv', 'kernels.json']
    if importlib.util.find_spec('matplotlib') is None:
        print("no matplotlib: no plots (pip install matplotlib)")
    else:
        for name in dict.fromkeys(r['sweep'] for r in rows if r['sweep']):
            png = 'kernels_' + name.replace(' + ', '_').replace(' ', '_') + '.png'
            plot(os.path.join(out_dir, png), name, [r for r in rows if r['sweep'] == name], ceiling,
                 f"{(header or {}).get('device', device)}, {str(dtype).split('.')[-1]}")
            written.append(png)
    print(f"wrote {', '.join(written)} in {out_dir}")
    return rows


# --tune: each kernel's tile settings ----------------------------------------------

def tune_spaces():
    """op -> [settings]: each setting maps a kernel module's constants ('NAME' or
    'DICT.key') to values. The norms' forward and backward are tuned apart."""
    grid = lambda **axes: [dict(zip(axes, v)) for v in itertools.product(*axes.values())]
    norm = grid(**{'TILE.fwd': [1024, 2048, 4096], 'PER_THREAD.fwd': [8, 16, 32],
                   'COLUMNS_PER_SM.fwd': [16384, 32768, 65536], 'STAGES.fwd': [1, 3]}) \
        + grid(**{'COLUMNS_PER_SM.bwd': [2048, 4096, 8192], 'STAGES.bwd': [2, 3, 4]})
    elementwise = grid(BLOCK_N=[2048, 4096], NUM_WARPS=[4, 8, 16])
    gelu = [{'TILE.fwd': (m, n, w), 'TILE.bwd': (m, n, w)} for m, n in [(1, 1024), (1, 2048), (4, 512), (4, 1024),
            (8, 256), (8, 512), (16, 256), (32, 128), (32, 256)] for w in (2, 4, 8)]
    return {'layer_norm': norm, 'rms_norm': norm, 'rms_norm + residual': norm,
            'rotary': grid(BLOCK_T=[32, 64], NUM_WARPS=[4]), 'swiglu': elementwise, 'gelu': gelu,
            'rowwise_fp8': [{'TILE': t} for t in [(2048, 4), (4096, 4), (4096, 8), (8192, 8), (16384, 8), (16384, 16)]]}

def set_constants(module, setting):
    """Apply a setting to the module; returns the setting that undoes it."""
    old = {}
    for key, value in setting.items():
        name, _, sub = key.partition('.')
        if sub:
            old[key], getattr(module, name)[sub] = getattr(module, name)[sub], value
        else:
            old[key] = getattr(module, name)
            setattr(module, name, value)
    return old

def tune(sizes, dtype, device, only_ops=''):
    """Triton's GPU time per setting at the model's shapes and, for the norms, at 4096x8192."""
    spaces, results = tune_spaces(), {}
    cases = [c for c in chosen_cases(sizes, dtype, device, only_ops) if c.op in spaces
             and (c.sweep is None or ('norm' in c.op and c.x == 8192))]
    print(f"Tuning: Triton GPU time (CUDA graph) per setting, us, and {cases[0].unit if cases else ''} "
          f"of minimum traffic")
    for case in cases:
        module = importlib.import_module('kernels.' + ('norm' if 'norm' in case.op else case.op))
        for setting in spaces[case.op]:
            old = set_constants(module, setting)
            by = {r['pass']: r for r in bench_case(case, {'triton': case.fn('triton')}, check=False)}
            set_constants(module, old)
            results[f"{case.op} {case.shape} {setting}"] = {p: by[p]['gpu_ms'] for p in case.passes}
            print(f"  {case.op} {case.shape} {' '.join(f'{k}={v}' for k, v in setting.items())}: "
                  + '  '.join(f"{p} {by[p]['gpu_ms'] * 1e3:.1f} us {by[p]['rate']:,.0f}" for p in case.passes),
                  flush=True)
    return results
