"""
kernels='auto', measured: for each op of a model, whether the Triton kernel or the PyTorch
reference is faster on this GPU at this run's shapes (for the loss, PyTorch's side is the
model's: nanoGPT's unfused head and loss). Each op runs forward + backward
(forward alone for sampling) on random inputs of the model's shapes and dtype, under
autocast as the model runs, by both implementations (each under torch.compile when the
model will be compiled). The two must agree (a loose bf16-level check: a kernel that
fails, or is far off, loses). Then, for an eager model, the faster per call in a loop of
back-to-back calls wins (the larger of the host's and the GPU's time: what the op adds to
an eager step); for a compiled one, or one whose whole step is replayed from a CUDA graph
(step_graph.py), the one of less GPU time (CUDA graph replay), as such a step launches
without Python between ops. Deciding compiled ones on the loop time made GPT-2's step 7%
slower on the H100. For eager steps neither rule holds on every host (an op's launch overhead
can hide behind another's GPU time: deciding on GPU time made GPT-2's eager step 23% slower on
the H100 on 2026-11-22, and 9-10% faster there on 2026-11-25), so model.py times the eager
training step with both choices where they differ (eager_step_choice; docs/perf-notes.md).
Where a step decided on GPU time was asked to save memory (model.py: recompute), memory
decides first (by_memory): the fused loss against PyTorch's logits, whose GPU times can tie.
The measurements are cached in a JSON file keyed by the GPU, the torch and triton versions,
the op, its shapes, the dtype, compile and graphed, so a second start measures nothing (the
memory rule is applied on reading them).
"""
import os
import json
import time
import statistics
import contextlib

import torch

import kernels
from step_graph import cublas_without_workspace
from kernels.backend import triton, why_not_triton_on, TRITON_AVAILABLE
from kernels.rotary import rotary_tables

AGREE = 0.05  # max |triton - torch| over max |torch|, per output and gradient
# with memory asked, the larger peak loses when it is at least this many times the other's and this many MiB
# more: smaller differences (about 1% of GPT-2's step's peak) are left to time, since an op's own peak need
# not fall at the step's
MEMORY_RATIO, MEMORY_MIB = 1.25, 64


def op_cases(ops, B, T, C, n_head, n_kv_head, vocab_size, mlp_hidden, bias, dtype, device,
             loss_chunk_bytes=None, gelu_approximate='none', mlp_one_op=False):
    """{op: (shapes as text, make() -> inputs, fn(backend) -> f(*inputs) -> outputs)}: the
    ops as the model calls them (model.py), at batch B x T; the loss with the model's chunk;
    GELU in the form the model asks for, or with mlp_one_op the whole MLP (kernels.gelu_mlp)."""
    act = lambda *s: torch.randn(*s, device=device, dtype=dtype, requires_grad=True)
    par = lambda n: (1 + 0.1 * torch.randn(n, device=device)).requires_grad_()
    hs, nkv = C // n_head, n_kv_head or n_head
    cos, sin = (t.to(device) for t in rotary_tables(hs, T))
    # the norms' output in the dtype of the Linear it feeds, as the model asks under autocast
    fused_loss = lambda x, w, y: kernels.linear_cross_entropy(x, w, y, ignore_index=-1, chunk_bytes=loss_chunk_bytes,
                                                              backend='triton')
    cases = {
        'layer_norm': (f"{B}x{T}x{C}", lambda: [act(B, T, C), act(B, T, C), par(C), par(C) if bias else None],
                       lambda be: lambda u, x, w, b: kernels.layer_norm(u, w, b, 1e-5, residual=x, out_dtype=dtype, backend=be)),
        'rms_norm': (f"{B}x{T}x{C}", lambda: [act(B, T, C), act(B, T, C), par(C)],
                     lambda be: lambda u, x, w: kernels.rms_norm(u, w, 1e-6, residual=x, out_dtype=dtype, backend=be)),
        'gelu': (f"{B}x{T}x{mlp_hidden}" + (f" {gelu_approximate}" if gelu_approximate != 'none' else ''),
                 lambda: [act(B, T, mlp_hidden), par(mlp_hidden) if bias else None],
                 lambda be: lambda h, b: kernels.gelu(h, b, gelu_approximate, backend=be)),
        # views of one projection, read in place, as in the model (the gradient reaches the projection)
        'swiglu': (f"{B}x{T}x{mlp_hidden}", lambda: [act(B, T, 2 * mlp_hidden)],
                   lambda be: lambda fc: kernels.swiglu(*fc.chunk(2, dim=-1), backend=be)),
        # both on the packed projection: PyTorch's side includes its concatenations of q, k, v and their gradients
        'rotary': (f"{B}x{n_head}+{nkv}x{T}x{hs} packed", lambda: [act(B, T, n_head + 2 * nkv, hs), cos, sin],
                   lambda be: lambda qkv, c, s: kernels.rotary_qkv(qkv, n_head + nkv, c, s, backend=be)),
        'attention': (f"{B}x{n_head}/{nkv}x{T}x{hs} packed", lambda: [act(B, T, n_head + 2 * nkv, hs)],
                      lambda be: lambda qkv: kernels.flash_attention_qkv(qkv, n_head, causal=True, backend=be)),
        'cross_entropy': (f"{B}x{T}x{C} V={vocab_size}" + (f" chunks of {loss_chunk_bytes / 2**20:g} MiB" if loss_chunk_bytes is not None else ''),
                          # the weight in the activations' dtype: the model's fp32 weight is cast first (by the
                          # op itself, or by autocast for PyTorch's), on either side, and not timed here
                          lambda: [act(B, T, C), (torch.randn(vocab_size, C, device=device) * C ** -0.5).to(dtype).requires_grad_(),
                                   torch.randint(vocab_size, (B, T), device=device)],
                          lambda be: fused_loss if be == 'triton' else kernels.unfused_cross_entropy),  # PyTorch's: as the model runs it
    }
    if mlp_one_op:  # the weights in the activations' dtype, as for the loss (fp32 ones: autocast's cached casts,
        # which a CUDA graph's capture failed on: docs/perf-notes.md, twenty-fourth session)
        weight = lambda n, k: (torch.randn(n, k, device=device) * k ** -0.5).to(dtype).requires_grad_()
        cases['gelu'] = (f"{B}x{T}x{C}->{mlp_hidden}->{C} MLP tanh", lambda: [act(B, T, C), weight(mlp_hidden, C), weight(C, mlp_hidden)],
                         lambda be: lambda x, w1, w2: kernels.gelu_mlp(x, w1, w2, backend=be))
    return {op: cases[op] for op in ops}


def _run(f, inputs, backward=True):
    """Forward (and backward) once; the outputs (and the gradients of the inputs that take one)."""
    if not backward:
        with torch.no_grad():
            outs = f(*inputs)
        return list(outs) if isinstance(outs, tuple) else [outs]
    outs = f(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    diff = [o for o in outs if o.requires_grad]
    grads = torch.autograd.grad(diff, [t for t in inputs if torch.is_tensor(t) and t.requires_grad],
                                [torch.ones_like(o) / o.numel() ** 0.5 for o in diff])
    return [o.detach() for o in outs] + list(grads)


def time_ms(fn, reps, warmup=3, wait_each=True):
    """Median milliseconds of fn() after warm-up calls; CUDA events where there is a GPU
    (bench.py times with it too). wait_each: the host waits for each call to end before it
    launches the next, as nanoGPT's bench waits on loss.item() every step, so a call's time
    includes the GPU idling while the host launches it. Otherwise the calls run back to back
    with an event between each two and one wait at the end, as a training loop runs between
    its logs: a call launched while the GPU is still busy with the one before costs its GPU
    time only (the CPU times each call either way)."""
    cuda = torch.cuda.is_available()
    for _ in range(warmup):
        fn()
    if cuda:
        torch.cuda.synchronize()
    if cuda and not wait_each:
        events = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
        events[0].record()
        for end in events[1:]:
            fn()
            end.record()
        events[-1].synchronize()
        return statistics.median(start.elapsed_time(end) for start, end in zip(events, events[1:]))
    times = []
    for _ in range(reps):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def graph_ms(fn, calls=10, prepare=None, as_step_graph=False):
    """GPU milliseconds per fn() without launch overhead: `calls` calls captured in one CUDA
    graph and replayed; prepare() first, on the capture's stream (a backward must run where
    its forward ran); as_step_graph: warmed up and captured as StepGraph records a step (cuBLAS
    without its workspace). None on a CPU or where capture fails (an op that synchronises)."""
    if not torch.cuda.is_available():
        return None
    graph, capturing = None, False
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), cublas_without_workspace() if as_step_graph else contextlib.nullcontext():
            if prepare:
                prepare()
            for _ in range(3):  # warm-up off the capture, as CUDA graphs require
                fn()
            graph = torch.cuda.CUDAGraph()
            capturing = True
            with torch.cuda.graph(graph, stream=side):
                for _ in range(calls):
                    fn()
            capturing = False
        torch.cuda.current_stream().wait_stream(side)
        return time_ms(graph.replay, 10) / calls
    except Exception as e:
        print(f"    CUDA graph capture failed: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
        if capturing:
            # torch skips the CUDA generator's end of capture when a capture fails, and its next random draw
            # would raise ("Offset increment outside graph capture"): a fresh state, same seed and offset
            gen = torch.cuda.default_generators[torch.cuda.current_device()]
            gen.graphsafe_set_state(gen.clone_state())
        return None
    finally:  # a graph's memory pool goes back to the device only here
        graph = None
        torch.cuda.empty_cache()


LOOP = 5  # calls per timed stretch: the time per call of a steady loop, the host running ahead where it can


def _times(f, inputs, backward, reps, graphed):
    """(ms per call in a loop of back-to-back calls: the larger of the host's and the GPU's
    time per call, which is what an op adds to a training step; GPU ms per call, from a CUDA
    graph, recorded as StepGraph records a step where the step is graphed: the GPU's part
    alone). Without a GPU or a CUDA graph, the second is the first."""
    run = lambda: _run(f, inputs, backward)
    loop = time_ms(lambda: [run() for _ in range(LOOP)], reps) / LOOP
    return loop, graph_ms(run, as_step_graph=graphed) or loop


def peak_mib(fn):
    """MiB that one fn() allocates at its peak beyond what was allocated before it, on the
    current CUDA device (where time_ms and graph_ms time it too); None without a GPU."""
    if not torch.cuda.is_available():
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - before) / 2**20


def measure(make, fn, compile, backward=True, reps=10, graphed=False):
    """dict(impl, triton_ms, torch_ms, triton_gpu_ms, torch_gpu_ms, triton_peak_mib, torch_peak_mib,
    why, failed) for one op.
    If the two agree: the faster per call in a loop (*_ms) for an eager model, whose step
    pays each op's launch overhead; the one of less GPU time for a compiled one or a step
    replayed from a CUDA graph (graphed), which launch their kernels without Python in
    between (per op, the compiled call's overhead would decide instead). failed: the Triton
    kernel raised or disagreed, and PyTorch stands in. The peaks (peak_mib) are for choose's
    memory rule."""
    inputs = make()
    impls = {be: torch.compile(fn(be)) if compile else fn(be) for be in ('torch', 'triton')}
    want = _run(impls['torch'], inputs, backward)
    torch_ms, torch_gpu_ms = _times(impls['torch'], inputs, backward, reps, graphed)
    torch_peak_mib = peak_mib(lambda: _run(impls['torch'], inputs, backward))
    lost = lambda why: dict(impl='torch', triton_ms=None, torch_ms=torch_ms, triton_gpu_ms=None,
                            torch_gpu_ms=torch_gpu_ms, triton_peak_mib=None, torch_peak_mib=torch_peak_mib,
                            why=why, failed=True)
    try:
        got = _run(impls['triton'], inputs, backward)
        off = max(((g.float() - w.float()).abs().max() / (w.float().abs().max() + 1e-6)).item()
                  for g, w in zip(got, want) if g is not None and w is not None)
        if not off <= AGREE:  # NaN too
            return lost(f"Triton off by {off:.2g} of the output's scale")
        triton_ms, triton_gpu_ms = _times(impls['triton'], inputs, backward, reps, graphed)
        triton_peak_mib = peak_mib(lambda: _run(impls['triton'], inputs, backward))
    except Exception as e:  # a kernel that cannot compile or launch here loses
        return lost(f"Triton failed: {type(e).__name__}: {str(e)[:120]}")
    triton_wins = triton_gpu_ms < torch_gpu_ms if compile or graphed else triton_ms < torch_ms
    return dict(impl='triton' if triton_wins else 'torch', triton_ms=triton_ms, torch_ms=torch_ms,
                triton_gpu_ms=triton_gpu_ms, torch_gpu_ms=torch_gpu_ms, triton_peak_mib=triton_peak_mib,
                torch_peak_mib=torch_peak_mib, why=None, failed=False)


def by_memory(r):
    """A measurement's choice where memory decides first: an implementation whose peak is at
    least MEMORY_RATIO times the other's and MEMORY_MIB more loses. Where that overturns the
    choice by time, the result says so (by_memory); otherwise it is r."""
    peaks = dict(triton=r.get('triton_peak_mib'), torch=r.get('torch_peak_mib'))
    if r['failed'] or None in peaks.values():  # a kernel that failed stays out
        return r
    for impl, other in (('triton', 'torch'), ('torch', 'triton')):
        far_above = peaks[other] >= MEMORY_RATIO * peaks[impl] and peaks[other] - peaks[impl] >= MEMORY_MIB
        if far_above and r['impl'] != impl:
            return dict(r, impl=impl, by_memory=True)
    return r


def cache_key(op, shapes, dtype, compile, backward, device, graphed=False):
    gpu = torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'
    # a workspace the user set changes which kernels cuBLAS picks (the fused loss alone: 0.2 ms either way); without
    # one, graphed steps are measured as StepGraph records them, without a workspace, the rest with cuBLAS's default
    workspace = f" | cuBLAS workspace {os.environ.get('CUBLAS_WORKSPACE_CONFIG', 'default')}" if device.type == 'cuda' else ''
    return (f"{gpu}{workspace} | torch {torch.__version__} | triton {triton.__version__ if TRITON_AVAILABLE else None} | "
            f"{op} {shapes} {str(dtype).split('.')[-1]} | compile={compile}{' | graphed' if graphed else ''} | "
            f"{'fwd+bwd' if backward else 'fwd'} | v12")


def choose(cases, dtype, compile, device, cache_path='kernels_cache.json', backward=True, graphed=False,
           memory=False):
    """{op: dict(impl, triton_ms, torch_ms, why, failed, ...)} for the op_cases, from the cache at
    cache_path (None: no cache) or measured, forward + backward (or forward only), for a step
    compiled or not and replayed from a CUDA graph or not (graphed); memory: memory decides first
    (by_memory). PyTorch everywhere where Triton cannot run."""
    device = torch.device(device)
    reason = why_not_triton_on(device.type)
    if reason:
        return {op: dict(impl='torch', triton_ms=None, torch_ms=None, why=reason, failed=False) for op in cases}
    cache = load_cache(cache_path)
    chosen, new = {}, False
    for op, (shapes, make, fn) in cases.items():
        key = cache_key(op, shapes, dtype, compile, backward, device, graphed)
        if key not in cache:
            with torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):  # as train.py runs the model
                cache[key], new = measure(make, fn, compile, backward, graphed=graphed), True
        chosen[op] = by_memory(cache[key]) if memory else cache[key]
    if new:
        save_cache(cache_path, cache)
    return chosen


def load_cache(cache_path):
    """The decisions cached at cache_path ({} where there are none, or for None)."""
    if cache_path and os.path.exists(cache_path):
        with open(cache_path) as f:
            return json.load(f)
    return {}


def save_cache(cache_path, cache):
    if cache_path:
        with open(cache_path + '.tmp', 'w') as f:
            json.dump(cache, f, indent=1)
        os.replace(cache_path + '.tmp', cache_path)
