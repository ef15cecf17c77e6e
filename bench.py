"""
Benchmark, in one run on one device:
1. full training steps (forward, backward, AdamW) of the same model with the Triton
   kernels off (the PyTorch baseline) and on, each eager and under torch.compile;
2. each Triton op against PyTorch eager and torch.compile, forward and forward+backward;
3. attention and 4. the LM head's loss against their PyTorch and published rivals;
5. the optimizer: AdamW's step and Muon's (Newton-Schulz in PyTorch and in Triton), alone
   and as a share of the whole training step.
$ python bench.py                                   # GPT-2 124M, batch 12x1024, bf16, random tokens
$ python bench.py --arch=llama --n_kv_head=4 --json_out=bench.json
On a machine without CUDA it says so and runs a small model on the CPU, eager only.
"""
import json
import collections
import math
import functools
import itertools
import importlib

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import kernels
from kernels.choose import time_ms
from model import GPTConfig, GPT, gpu_peak_flops, rotary_tables
from configurator import configure

# -----------------------------------------------------------------------------
batch_size = 12
block_size = 1024
vocab_size = 50304
arch = 'gpt2'
n_layer = 12
n_head = 12
n_kv_head = None
n_embd = 768
bias = False
dtype = 'bfloat16'
warmup_steps = 10  # untimed steps first: compilation, autotuning, allocator warm-up
timed_steps = 30
steps = True  # the training-step table
ops = True  # the per-op table
attention = True  # the attention table (GPU only): Triton vs SDPA vs naive PyTorch
linear_ce = True  # the LM head's loss table (GPU only): fused linear + cross-entropy vs PyTorch, Liger
optim = True  # the optimizer table: AdamW vs Muon, the step alone and its share of a training step
op_names = ''  # only these ops in the table, comma-separated (e.g. 'swiglu,gelu'); '' = all
tune = False  # instead of the tables: time each kernel's tile settings (module constants)
tune_ops = ''  # with tune: only these ops, comma-separated (e.g. 'layer_norm,swiglu'); '' = all
json_out = ''  # write every result to this file too
seed = 1337
# -----------------------------------------------------------------------------
config = configure(globals())
cuda = torch.cuda.is_available()
device = 'cuda' if cuda else 'cpu'
if not cuda:
    print("no CUDA here: a small model on the CPU, eager only (no compile); times are not GPU times")
    batch_size, block_size, n_layer, n_head, n_embd, dtype = 4, 128, 2, 4, 128, 'float32'
    warmup_steps, timed_steps = 2, 5
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
gpu_name, peak_flops = gpu_peak_flops(device)
torch.backends.cuda.matmul.allow_tf32 = True
print(f"device: {gpu_name}, torch {torch.__version__}, triton "
      f"{kernels.backend.triton.__version__ if kernels.TRITON_AVAILABLE else 'not installed'}, dtype {dtype}")

def sync():
    if cuda:
        torch.cuda.synchronize()

def table(title, header, rows):
    print(f"\n{title}")
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))

results = {'config': config, 'device': gpu_name, 'torch': torch.__version__}

# 1. training steps ----------------------------------------------------------------
gptconf = GPTConfig(block_size=block_size, vocab_size=vocab_size, n_layer=n_layer, n_head=n_head,
                    n_kv_head=n_kv_head, n_embd=n_embd, bias=bias, arch=arch, dropout=0.0)
torch.manual_seed(seed)
X = torch.randint(vocab_size, (batch_size, block_size), device=device)
Y = torch.randint(vocab_size, (batch_size, block_size), device=device)
ctx = torch.autocast(device, dtype=ptdtype, enabled=ptdtype != torch.float32)
tokens = batch_size * block_size
variants = [(k, c) for c in ([False, True] if cuda else [False]) for k in ('torch', 'auto')] if steps and not tune else []
step_rows, step_results = [], {}
for kernel_setting, use_compile in variants:
    name = f"{'kernels' if kernel_setting == 'auto' else 'baseline'} {'compiled' if use_compile else 'eager'}"
    print(f"\n{name}: building, {warmup_steps} warm-up + {timed_steps} timed steps", flush=True)
    torch.manual_seed(seed)  # the same initial weights for every variant
    model = GPT(gptconf, kernels=kernel_setting, device_type=device).to(device)
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), device)
    step_model = torch.compile(model) if use_compile else model
    losses = []

    def train_step():
        with ctx:
            _, loss = step_model(X, Y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())

    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    ms = time_ms(train_step, timed_steps, warmup=warmup_steps)
    mem = torch.cuda.max_memory_allocated() / 2**20 if cuda else None
    mfu = model.estimate_mfu(tokens, ms / 1e3, peak_flops)
    step_results[name] = dict(ms=ms, tokens_per_s=tokens / ms * 1e3, mfu=mfu, peak_mem_mib=mem,
                              first_loss=losses[0].item(), final_loss=losses[-1].item(), kernels=model.kernels)
    del model, optimizer, step_model, losses
for name, r in step_results.items():
    base = step_results['baseline eager']['ms']
    step_rows.append([name, f"{r['ms']:.2f}", f"{r['tokens_per_s']:,.0f}",
                      'n/a' if r['mfu'] is None else f"{100 * r['mfu']:.1f}%", 'n/a' if r['peak_mem_mib'] is None else f"{r['peak_mem_mib']:,.0f}",
                      f"{r['first_loss']:.4f}", f"{r['final_loss']:.4f}", f"{base / r['ms']:.2f}x"])
results['train_step'] = step_results

# 2. ops -------------------------------------------------------------------------
def graph_ms(fn, calls=10):
    """GPU milliseconds per fn() without launch overhead: `calls` calls captured in one
    CUDA graph and replayed. None on a CPU or where capture fails."""
    if not cuda:
        return None
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture, as CUDA graphs require
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        return time_ms(graph.replay, 20) / calls
    except Exception as e:
        print(f"  CUDA graph capture failed: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
        return None

def peak_mib(fn):
    """MiB that one fn() allocates at its peak beyond what was allocated before it."""
    if not cuda:
        return None
    sync()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    fn()
    sync()
    return (torch.cuda.max_memory_allocated() - before) / 2**20

def copy_GBps():
    """The copy ceiling measured here, bytes read + written per second over 1 GiB: the
    better of a plain device copy (cudaMemcpy) and an elementwise kernel (torch.neg),
    which on the H200 outruns the memcpy."""
    if not cuda:
        return None
    src = torch.randn(2**29, dtype=torch.bfloat16, device=device)
    dst = torch.empty_like(src)
    best_ms = min(graph_ms(lambda: dst.copy_(src), calls=5), graph_ms(lambda: torch.neg(src, out=dst), calls=5))
    return 2 * src.numel() * 2 / best_ms / 1e6

def leaf(t, requires_grad=True):
    """t as a leaf tensor that keeps t's strides (a view of a bigger buffer stays one)."""
    return t.detach().requires_grad_(requires_grad)

def op_cases(M, N, B, H, T, D):
    """Each case: (op, shape, make() -> list of input tensors, the indices of those to
    differentiate, {impl: fn(*inputs)}, minimum bytes moved forward and forward+backward).
    Activations in `dtype`, weights and biases in fp32 (as in a model under autocast),
    cos/sin in fp32. The gradient of a fused residual reaches x and the residual as one
    tensor."""
    es = torch.finfo(ptdtype).bits // 8
    act = lambda *shape: torch.randn(*shape, device=device, dtype=ptdtype)
    param = lambda n: leaf(1 + 0.1 * torch.randn(n, device=device))
    cos, sin = (t.to(device) for t in rotary_tables(D, T, 10000.0))
    MN, n = M * N * es, B * H * T * D * es
    return [
        ('layer_norm', f"{M}x{N}", lambda: [leaf(act(M, N)), param(N), param(N)], (0, 1, 2),
         dict(torch=kernels.layer_norm_ref, triton=kernels.layer_norm), (2 * MN, 5 * MN)),
        ('layer_norm + residual', f"{M}x{N}", lambda: [leaf(act(M, N)), param(N), param(N), leaf(act(M, N))], (0, 1, 2, 3),
         dict(torch=lambda x, w, b, r: kernels.layer_norm_ref(x, w, b, residual=r),
              triton=lambda x, w, b, r: kernels.layer_norm(x, w, b, residual=r)), (4 * MN, 8 * MN)),
        ('rms_norm', f"{M}x{N}", lambda: [leaf(act(M, N)), param(N)], (0, 1),
         dict(torch=kernels.rms_norm_ref, triton=kernels.rms_norm), (2 * MN, 5 * MN)),
        ('rms_norm + residual', f"{M}x{N}", lambda: [leaf(act(M, N)), param(N), leaf(act(M, N))], (0, 1, 2),
         dict(torch=lambda x, w, r: kernels.rms_norm_ref(x, w, residual=r),
              triton=lambda x, w, r: kernels.rms_norm(x, w, residual=r)), (4 * MN, 8 * MN)),
        # q and k as the model rotates them: one (B, 2H, T, D) view of the fused qkv projection
        ('rotary q and k', f"{B}x{H}x{T}x{D}",
         lambda: [leaf(act(B, T, 3 * H, D).transpose(1, 2)[:, :2 * H]), cos, sin], (0,),
         dict(torch=kernels.rotary_ref, triton=kernels.rotary), (2 * 2 * n, 4 * 2 * n)),
        # gate and up as the model has them: the two halves of one (M, 2 * 4N) projection
        ('swiglu', f"{M}x{4 * N}", lambda: [leaf(t) for t in act(M, 8 * N).chunk(2, dim=-1)], (0, 1),
         dict(torch=kernels.swiglu_ref, triton=kernels.swiglu), (3 * 4 * MN, 8 * 4 * MN)),
        ('gelu', f"{M}x{4 * N}", lambda: [leaf(act(M, 4 * N))], (0,),
         dict(torch=kernels.gelu_ref, triton=kernels.gelu), (2 * 4 * MN, 5 * 4 * MN)),
        ('gelu + bias', f"{M}x{4 * N}", lambda: [leaf(act(M, 4 * N)), param(4 * N)], (0, 1),
         dict(torch=kernels.gelu_ref, triton=kernels.gelu), (2 * 4 * MN, 5 * 4 * MN)),
    ]

def cases_to_run(names):
    """The op cases at the model's shape and, on a GPU, the norms also at 4096x8192 (the
    issue's wide shape, LLaMA-7B-like rows); only the ops in `names` (comma-separated)
    when it is not empty."""
    sizes = [(batch_size * block_size, n_embd, batch_size, n_head, block_size, n_embd // n_head)]
    if cuda:
        sizes.append((4096, 8192, 4, 32, 1024, 128))
    for size in sizes:
        for case in op_cases(*size):
            if (size == sizes[0] or 'norm' in case[0]) and (not names or case[0] in names.split(',')):
                yield case

def bench_op(op, shape, make, diff, impls, nbytes):
    """Each implementation forward and forward+backward: time per call as an eager loop
    sees it (launch overhead included) and GPU time (CUDA graph). Inputs rotate among
    copies that overflow the 50 MB L2 cache, so the bandwidth is DRAM's. None where an
    implementation refuses the inputs (torch eager's LayerNorm takes no bf16 input with
    an fp32 weight on CUDA)."""
    first = make()
    with torch.no_grad():  # no autograd graph kept alive: it would tie the leaves to this stream
        y = impls['triton'](*first)
    outs = y if isinstance(y, tuple) else (y,)
    copies = max(2, -(-200 * 2**20 // nbytes[1]))
    inputs = [first] + [make() for _ in range(copies - 1)]
    dys = [[torch.randn_like(o) for o in outs] for _ in range(copies)]
    if cuda and 'torch' in impls:
        impls = dict(impls, compile=torch.compile(impls['torch'], dynamic=False))
    result = {}
    for pass_ in ('fwd', 'fwdbwd'):
        for impl, f in impls.items():
            calls = itertools.count()

            def run():
                k = next(calls) % copies
                y = f(*inputs[k])
                if pass_ == 'fwdbwd':
                    torch.autograd.grad(y, [inputs[k][i] for i in diff], dys[k])

            try:
                call, gpu, peak = time_ms(run, 50 if cuda else 3), graph_ms(run), peak_mib(run)
            except Exception as e:  # an implementation that refuses these inputs
                print(f"  {op} {impl}: {type(e).__name__}: {str(e).splitlines()[0][:90]}")
                call = gpu = peak = None
            t = gpu or call
            result[f'{impl}_{pass_}'] = dict(call_ms=call, gpu_ms=gpu, peak_mib=peak,
                                             GBps=t and nbytes[pass_ == 'fwdbwd'] / t / 1e6)
    base = impls.get('compile') or impls.get('torch') or impls.get('sdpa')
    if base:
        with torch.no_grad():
            y_torch = base(*first)
        y_torch = y_torch if isinstance(y_torch, tuple) else (y_torch,)
        result['max_abs_diff'] = max((a.float() - b.float()).abs().max().item() for a, b in zip(outs, y_torch))
    return result

def op_rows(op, shape, r, ceiling):
    us = lambda ms: 'n/a' if ms is None else f"{ms * 1e3:.1f}"
    ratio = lambda a, b: 'n/a' if a is None or b is None else f"{a / b:.2f}x"
    rows = []
    for pass_ in ('fwd', 'fwdbwd'):
        cell = lambda impl: r.get(f'{impl}_{pass_}', {})
        k = cell('triton')
        rows.append([op, shape, pass_] + [f"{us(cell(i).get('call_ms'))} / {us(cell(i).get('gpu_ms'))}"
                                          for i in ('torch', 'triton', 'compile')]
                    + [f"{k['GBps']:,.0f}" + (f" ({100 * k['GBps'] / ceiling:.0f}%)" if ceiling else ''),
                       ratio(cell('torch').get('gpu_ms'), k['gpu_ms']), ratio(cell('compile').get('gpu_ms'), k['gpu_ms']),
                       ratio(cell('compile').get('call_ms'), k['call_ms'])]
                    + [f"{r['max_abs_diff']:.1e}" if pass_ == 'fwd' else ''])
    return rows

if ops and not tune and kernels.TRITON_AVAILABLE and (cuda or kernels.INTERPRET):
    ceiling = copy_GBps()
    results['copy_GBps'] = ceiling
    results['ops'], rows = {}, []
    for op, shape, make, diff, impls, nbytes in cases_to_run(op_names):
        print(f"{op} {shape}...", flush=True)
        r = results['ops'][f"{op} {shape}"] = bench_op(op, shape, make, diff, impls, nbytes)
        rows += op_rows(op, shape, r, ceiling)
    table(f"Ops, {dtype} activations, fp32 weights. Each implementation: us per call in an eager loop / us of "
          f"GPU time (CUDA graph). Triton's GB/s of minimum traffic in GPU time"
          + (f" (% of the {ceiling:,.0f} GB/s copy measured here)" if ceiling else "") + ". Speedups: in GPU time, and per call against compile. max |Triton - torch| forward",
          ['op', 'shape', 'pass', 'torch eager', 'triton', 'torch.compile', 'triton GB/s', 'vs eager', 'vs compile',
           'vs compile/call', 'max diff'], rows)
elif ops and not tune:
    print("\nop table skipped: Triton cannot run here (no CUDA, and TRITON_INTERPRET is not set)")

# 3. attention --------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def future_mask(T, device):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(1)

def attention_naive(q, k, v, causal=True):
    """Attention as nanoGPT writes it without SDPA: the (T, T) scores materialised,
    softmax in fp32; k and v repeated for grouped-query heads."""
    if k.shape[1] != q.shape[1]:
        k, v = (t.repeat_interleave(q.shape[1] // k.shape[1], dim=1) for t in (k, v))
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, H, T, T)
    if causal:
        att = att.masked_fill(future_mask(q.shape[2], q.device), float('-inf'))
    return F.softmax(att.float(), dim=-1).to(q.dtype) @ v

def sdpa_with(backend, causal):
    """SDPA held to one of its backends, to name what the default choice is up against."""
    def attend(q, k, v):
        with sdpa_kernel(backend):
            return kernels.flash_attention_ref(q, k, v, causal)
    return attend

def attention_cases():
    """(B, H, Hkv, T, D, causal): the issue's three causal shapes (GPT-2 small's first),
    GPT-2's non-causal, and grouped-query heads at GPT-2's size."""
    return [(12, 12, 12, 1024, 64, True), (4, 16, 16, 4096, 128, True), (8, 16, 16, 2048, 64, True),
            (12, 12, 12, 1024, 64, False), (12, 12, 4, 1024, 64, True)]

TUNED = ('_fwd_tuned', '_dkdv_tuned', '_dq_tuned')

def autotuned_choices():
    """{kernel: {autotuning key: chosen config}} of the attention kernels so far."""
    return {name: {str(key): str(config) for key, config in getattr(kernels.attention, name).cache.items()} for name in TUNED}

def autotuning_timings(before):
    """{kernel: [(config, ms)] fastest first} of the attention kernels that tuned a new key
    since `before` (an autotuned_choices()); the others reused an earlier choice."""
    median = lambda t: t[0] if isinstance(t, (list, tuple)) else t
    return {name: sorted(((str(c), median(t)) for c, t in getattr(kernels.attention, name).configs_timings.items()), key=lambda ct: ct[1])
            for name, chosen in autotuned_choices().items() if chosen.keys() - before[name].keys()}

if attention and not tune and cuda and kernels.TRITON_AVAILABLE:
    results['attention'], rows = {}, []
    for B, H, Hkv, T, D, causal in attention_cases():
        shape = f"{B}x{H}x{T}x{D}" + (f" kv{Hkv}" if Hkv != H else '') + (' causal' if causal else '')
        print(f"attention {shape}...", flush=True)
        make = lambda: [leaf(torch.randn(B, h, T, D, device=device, dtype=ptdtype)) for h in (H, Hkv, Hkv)]
        impls = {'triton': functools.partial(kernels.flash_attention, causal=causal, backend='triton'),
                 'sdpa': functools.partial(kernels.flash_attention_ref, causal=causal),
                 'sdpa flash': sdpa_with(SDPBackend.FLASH_ATTENTION, causal),
                 'sdpa cudnn': sdpa_with(SDPBackend.CUDNN_ATTENTION, causal),
                 'naive': functools.partial(attention_naive, causal=causal)}
        nbytes = 2 * (B * H + 2 * B * Hkv) * T * D * torch.finfo(ptdtype).bits // 8  # q, k, v, o, do
        before = autotuned_choices()
        r = results['attention'][shape] = bench_op('attention', shape, make, (0, 1, 2), impls, (nbytes, 2 * nbytes))
        r['autotuning'] = autotuning_timings(before)
        for name, timings in r['autotuning'].items():
            print(f"  {name} fastest: " + "; ".join(f"{c} {ms * 1e3:.1f}us" for c, ms in timings[:4]))
        flops = 4 * B * H * T * T * D * (0.5 if causal else 1.0)  # QK^T and PV; causal: half
        for pass_, work in (('fwd', flops), ('fwdbwd', 3.5 * flops)):  # backward: 5 matmuls of T x T x D
            sdpa_ms = r['sdpa_' + pass_]['gpu_ms']
            for impl in impls:
                c = r[f'{impl}_{pass_}']
                if c['gpu_ms'] is None:
                    rows.append([shape, pass_, impl, 'fails', '', '', ''])
                    continue
                c['TFLOPs'] = work / c['gpu_ms'] / 1e9
                rows.append([shape, pass_, impl, f"{c['gpu_ms'] * 1e3:.1f}", f"{c['TFLOPs']:.0f}",
                             f"{c['peak_mib']:,.0f}", f"{sdpa_ms / c['gpu_ms']:.2f}x" if sdpa_ms else 'n/a'])
    results['attention_autotuned'] = autotuned_choices()
    table(f"Attention, {dtype}: GPU time (CUDA graph, median) in us, TFLOP/s (forward 4BHT^2D, causal half of it; "
          f"forward+backward 3.5x the forward), peak MiB allocated by one call, speedup over SDPA's default choice",
          ['shape', 'pass', 'impl', 'us', 'TFLOP/s', 'peak MiB', 'vs sdpa'], rows)
    for name, chosen in results['attention_autotuned'].items():
        print(f"autotuned {name}: " + "; ".join(f"{k} -> {c}" for k, c in chosen.items()))
elif attention and not tune:
    print("\nattention table skipped: it needs CUDA")

# 4. linear + cross-entropy ----------------------------------------------------------
def liger_linear_ce(targets):
    """Liger-Kernel's fused linear cross-entropy, if installed (pip install liger-kernel)."""
    try:
        from liger_kernel.ops.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyFunction
    except ImportError as e:
        print(f"  no Liger row: {e}")
        return None
    return lambda x, w: LigerFusedLinearCrossEntropyFunction.apply(x, w, targets)[0]

if linear_ce and not tune and cuda and kernels.TRITON_AVAILABLE:
    N, H, V = batch_size * block_size, n_embd, vocab_size
    shape = f"{N}x{H} V={V}"
    print(f"linear cross-entropy {shape}...", flush=True)
    targets = torch.randint(0, V, (N,), device=device)
    make = lambda: [leaf(torch.randn(N, H, device=device, dtype=ptdtype)),
                    leaf(torch.randn(V, H, device=device, dtype=ptdtype) * H ** -0.5)]
    impls = {'triton': lambda x, w: kernels.linear_cross_entropy(x, w, targets, backend='triton'),
             'torch': lambda x, w: kernels.linear_cross_entropy_ref(x, w, targets),
             'liger': liger_linear_ce(targets)}
    impls = {k: f for k, f in impls.items() if f is not None}
    nbytes = (N + V) * H * torch.finfo(ptdtype).bits // 8 * 2  # x, W read, dx, dW written: the floor
    r = results['linear_ce'] = bench_op('linear_cross_entropy', shape, make, (0, 1), impls, (nbytes, nbytes))
    flops = 3 * 2 * N * H * V  # logits, dx, dW: three N x H x V matmuls
    base, compiled = r['torch_fwdbwd']['gpu_ms'], r['compile_fwdbwd']['gpu_ms']
    ms = lambda c: c['gpu_ms'] or c['call_ms']  # eager time where a CUDA graph cannot hold it (Liger syncs)
    rows = [[impl, f"{ms(r[f'{impl}_fwd']):.2f}", f"{ms(c):.2f}", f"{flops / ms(c) / 1e9:.0f}",
             f"{c['peak_mib']:,.0f}", f"{base / ms(c):.2f}x", f"{compiled / ms(c):.2f}x"]
            for impl in list(impls) + ['compile'] for c in [r[f'{impl}_fwdbwd']] if ms(c)]
    table(f"Linear + cross-entropy, {dtype}, {shape}: GPU time (CUDA graph, median) in ms (the fused ones make "
          f"the gradients in the forward), TFLOP/s of the three matmuls, peak MiB allocated by forward+backward, "
          f"max |loss difference| vs compiled {r['max_abs_diff']:.2e}",
          ['impl', 'fwd ms', 'fwd+bwd ms', 'TFLOP/s', 'peak MiB', 'vs eager', 'vs compile'], rows)
elif linear_ce and not tune:
    print("\nlinear cross-entropy table skipped: it needs CUDA")

# 5. optimizer -----------------------------------------------------------------------
def optimizer_rows():
    """For each optimizer, on the model with kernels='auto' (compiled on the GPU): the whole
    training step; what the optimizer adds to it (the step minus forward+backward alone:
    inside a step its launches queue behind the backward's kernels); its step alone
    (eager, as train.py runs it, on an idle queue, so every launch gap shows); and for
    Muon the Newton-Schulz stacks alone."""
    torch.manual_seed(seed)
    model = GPT(gptconf, kernels='auto', device_type=device).to(device)
    step_model = torch.compile(model) if cuda else model
    muon = lambda backend: dict(lr=0.02, momentum=0.95, weight_decay=0.0, embed_lr=6e-4, scalar_lr=6e-4, backend=backend)
    choices = {'AdamW': None, 'Muon, Newton-Schulz in PyTorch': muon('torch')}
    if cuda and kernels.TRITON_AVAILABLE:
        choices['Muon, Newton-Schulz in Triton'] = muon('triton')
    rows, out, fwd_bwd_ms = [], {}, None
    for name, setting in choices.items():
        print(f"  {name}...", flush=True)
        optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), device, muon=setting)

        def forward_backward():
            with ctx:
                _, loss = step_model(X, Y)
            loss.backward()

        def train_step():
            forward_backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        step_ms = time_ms(train_step, timed_steps, warmup=warmup_steps)
        if fwd_bwd_ms is None:
            fwd_bwd_ms = time_ms(lambda: (forward_backward(), model.zero_grad(set_to_none=True)), timed_steps)
        forward_backward()  # gradients for the optimizer's step alone
        opt_ms = time_ms(optimizer.step, timed_steps)
        optimizer.zero_grad(set_to_none=True)
        ns_ms = None
        if setting is not None:  # the stacks Muon orthogonalises, as it builds them
            shapes = collections.Counter(tuple(sorted(p.shape)) for p in optimizer.param_groups[0]['params'])
            stacks = [torch.randn(n, *shape, device=device) for shape, n in shapes.items()]
            ns_ms = time_ms(lambda: [kernels.newton_schulz(s, backend=optimizer.backend) for s in stacks], timed_steps)
        added = step_ms - fwd_bwd_ms
        out[name] = dict(step_ms=step_ms, forward_backward_ms=fwd_bwd_ms, added_ms=added, share=added / step_ms,
                         optimizer_alone_ms=opt_ms, newton_schulz_ms=ns_ms,
                         cuda_graph_replays=getattr(optimizer, 'graph_replays', None))
        if getattr(optimizer, 'graphs', None) is not None:
            print(f"  {optimizer.graph_replays} Muon steps replayed from CUDA graphs")
        rows.append([name, f"{step_ms:.2f}", f"{added:.2f}", f"{100 * added / step_ms:.1f}%", f"{opt_ms:.2f}",
                     '' if ns_ms is None else f"{ns_ms:.2f}"])
        del optimizer
    return rows, out

if optim and not tune:
    print("optimizer step...", flush=True)
    rows, results['optimizer'] = optimizer_rows()
    table(f"Optimizer, {arch} {gptconf.n_layer}L {gptconf.n_embd}d, batch {batch_size}x{block_size}, {dtype}: the whole "
          f"training step (kernels='auto'{', compiled' if cuda else ''}) with each optimizer, what the optimizer adds to "
          f"it (over forward+backward alone, {results['optimizer'][next(iter(results['optimizer']))]['forward_backward_ms']:.2f} "
          f"ms) and its share; the optimizer's step alone (eager, idle queue); medians of {timed_steps}, ms",
          ['optimizer', 'train step', 'optimizer adds', 'share', 'step alone', 'Newton-Schulz alone'], rows)

# 6. tuning (--tune=True) ---------------------------------------------------------
def tune_spaces():
    """op -> [settings]: each setting maps a kernel module's constants ('NAME' or
    'DICT.key') to values. The norms' forward and backward are tuned apart."""
    grid = lambda **axes: [dict(zip(axes, v)) for v in itertools.product(*axes.values())]
    norm = grid(**{'TILE.fwd': [1024, 2048, 4096], 'PER_THREAD.fwd': [8, 16, 32], 'COLUMNS_PER_SM.fwd': [16384, 32768, 65536],
                   'STAGES.fwd': [1, 3]}) \
        + grid(**{'COLUMNS_PER_SM.bwd': [2048, 4096, 8192], 'STAGES.bwd': [2, 3, 4]})
    elementwise = grid(BLOCK_N=[2048, 4096], NUM_WARPS=[4, 8, 16])
    gelu = [{'TILE.fwd': (m, n, w), 'TILE.bwd': (m, n, w)} for m, n in [(1, 1024), (1, 2048), (4, 512), (4, 1024),
            (8, 256), (8, 512), (16, 256), (32, 128), (32, 256)] for w in (2, 4, 8)]
    return {'layer_norm': norm, 'rms_norm': norm, 'rms_norm + residual': norm, 'rotary q and k': grid(BLOCK_T=[32, 64], NUM_WARPS=[4]),
            'swiglu': elementwise, 'gelu + bias': gelu}

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

if tune and cuda:
    spaces, rows, results['tune'] = tune_spaces(), [], {}
    for op, shape, make, diff, impls, nbytes in cases_to_run(tune_ops):
        if op not in spaces:
            continue
        module = importlib.import_module('kernels.' + ('norm' if 'norm' in op else op.split()[0]))
        for setting in spaces[op]:
            old = set_constants(module, setting)
            r = bench_op(op, shape, make, diff, {'triton': impls['triton']}, nbytes)
            set_constants(module, old)
            fwd, both = r['triton_fwd']['gpu_ms'], r['triton_fwdbwd']['gpu_ms']
            results['tune'][f"{op} {shape} {setting}"] = dict(fwd_ms=fwd, fwdbwd_ms=both)
            rows.append([op, shape, ' '.join(f"{k}={v}" for k, v in setting.items()), f"{fwd * 1e3:.1f}",
                         f"{both * 1e3:.1f}", f"{nbytes[0] / fwd / 1e6:,.0f}", f"{nbytes[1] / both / 1e6:,.0f}"])
    table("Tuning: Triton GPU time (CUDA graph) per setting, in us, and GB/s of minimum traffic",
          ['op', 'shape', 'setting', 'fwd us', 'fwd+bwd us', 'fwd GB/s', 'fwd+bwd GB/s'], rows)

if step_rows:
    table(f"Training step, {arch} {gptconf.n_layer}L {gptconf.n_embd}d, batch {batch_size}x{block_size}, {dtype}, "
          f"median of {timed_steps} steps after {warmup_steps} warm-up. Loss of the first step (same weights, same "
          f"batch: must agree) and of the last (the same {warmup_steps + timed_steps} steps on one random batch: "
          f"drifts apart with bf16 rounding)",
          ['variant', 'ms/iter', 'tokens/s', 'MFU', 'peak MiB', 'first loss', 'last loss', 'vs baseline eager'], step_rows)
if json_out:
    with open(json_out, 'w') as f:
        json.dump(results, f, indent=2)
    print(f"\nwrote {json_out}")
