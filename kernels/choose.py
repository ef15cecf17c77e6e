"""
Which implementation each op of a model runs: the one home of that decision.

resolve() turns a setting into the map a GPT is built from, {op: 'triton' | 'torch'}:
    'torch'   PyTorch everywhere (nanoGPT's model);
    'triton'  every Triton kernel, or a clear error where Triton cannot run;
    'auto'    the faster of the two per op, as measure() timed it on this GPU at the run's shapes;
              where nothing was measured (a CPU, a model built directly), Triton where it can run,
              except AUTO_KEEPS_TORCH.
The scripts' per-op overrides (use_triton_<name>: True, False or None) win over the setting.

measure() times each op forward + backward (forward alone for sampling) on random inputs of the
model's shapes and dtype, under autocast as the model runs, by both implementations (each under
torch.compile when the model will be compiled). The two must agree (a loose bf16-level check: a
kernel that fails, or is far off, loses). The one of less GPU time wins, timed as a CUDA graph's
replay: the training step is itself replayed from a CUDA graph (step_graph.py) or compiled, and
neither waits on Python between ops. The results are cached in a JSON file keyed by the GPU,
the torch and triton versions, the op, its shapes, the dtype and compile, so a second start
measures nothing.
"""
import os
import json
import time
import statistics

import torch

import kernels
from kernels.backend import triton, why_not_triton_on, cublas_without_workspace, TRITON_AVAILABLE, BACKENDS
from kernels.rotary import rotary_tables
from kernels.linear_cross_entropy import model_chunk_bytes

# The ops each architecture runs; 'optimizer' is AdamW's step (kernels.AdamW) and Muon's Newton-Schulz.
ARCH_OPS = {
    'gpt2': ('layer_norm', 'gelu', 'attention', 'cross_entropy', 'optimizer'),
    'llama': ('rms_norm', 'rotary', 'swiglu', 'attention', 'cross_entropy', 'optimizer'),
}
# The scripts' use_triton_<name> overrides and the ops each decides; 'mlp' is the MLP's activation.
OVERRIDES = {'layer_norm': ('layer_norm',), 'rms_norm': ('rms_norm',), 'rotary': ('rotary',),
             'mlp': ('gelu', 'swiglu'), 'attention': ('attention',), 'cross_entropy': ('cross_entropy',)}
# What 'auto' leaves to PyTorch where nothing measured the op: each loses to PyTorch somewhere
# (attention's forward alone and at head dim 128, the norm against Inductor's fused cast, GELU's
# ties; docs/benchmarks.md), so Triton runs them only where measured faster.
AUTO_KEEPS_TORCH = ('attention', 'layer_norm', 'gelu')
AGREE = 0.05  # max |triton - torch| over max |torch|, per output and gradient
CACHE_PATH = os.environ.get('KERNELS_CACHE', 'kernels_cache.json')  # delete it to measure again; '': no cache


def checked_overrides(overrides, arch):
    """The overrides {name: True | False | None} that decide (those not None), or a ValueError for a name that is
    not among OVERRIDES, a value that is not a bool, or an op arch does not have."""
    overrides = {name: v for name, v in (overrides or {}).items() if v is not None}
    if bad := sorted(f"use_triton_{name}={v!r}" for name, v in overrides.items() if not isinstance(v, bool)):
        raise ValueError(f"{', '.join(bad)}: each override is True, False or None")
    if set(overrides) - set(OVERRIDES):
        raise ValueError(f"unknown kernel overrides {sorted(set(overrides) - set(OVERRIDES))}: "
                         f"the ops are {tuple(OVERRIDES)}")
    if absent := sorted(n for n in overrides if not set(OVERRIDES[n]) & set(ARCH_OPS[arch])):
        raise ValueError(f"{', '.join(f'use_triton_{n}' for n in absent)}: arch={arch!r} has no such op")
    return overrides


def resolve(setting, config, device_type, overrides=None, measured=None):
    """{op: 'triton' | 'torch'} for the ops of config.arch (the module's docstring); measured:
    measure()'s choices. The Triton attention has no dropout: asking for it with dropout fails."""
    if setting not in BACKENDS:
        raise ValueError(f"kernels must be one of {BACKENDS}, got {setting!r}")
    overrides = checked_overrides(overrides, config.arch)
    reason = why_not_triton_on(device_type)
    impl = {}
    for op in ARCH_OPS[config.arch]:
        name = next((n for n in overrides if op in OVERRIDES[n]), None)
        if name:
            use, asked = overrides[name], f"use_triton_{name}=True"
        elif setting == 'auto':
            default = 'torch' if op in AUTO_KEEPS_TORCH else 'triton'
            use, asked = reason is None and (measured or {}).get(op, default) == 'triton', None
        else:
            use, asked = setting == 'triton', "kernels='triton'"
        if use and reason:
            raise ValueError(f"{asked} cannot run: {reason}")
        if use and op == 'attention' and config.dropout > 0:
            if asked:
                raise ValueError(f"{asked} cannot run: the Triton attention has no dropout (dropout={config.dropout})")
            use = False
        impl[op] = 'triton' if use else 'torch'
    return impl


def measure(config, batch_size, dtype, device, compile, recompute='none', overrides=None, backward=True,
            cache_path=CACHE_PATH):
    """({op: 'triton' | 'torch'}, {op: timings}) for the ops of config that `overrides` leaves at None,
    timed at batch_size x config.block_size (the module's docstring). Not measured: attention with
    dropout (only SDPA has it), the loss without backward (sampling makes none), the optimizer.
    Prints one line per op with both times."""
    name_of = {op: name for name, ops in OVERRIDES.items() for op in ops}
    overrides = overrides or {}
    ops = [op for op in ARCH_OPS[config.arch] if op in name_of and overrides.get(name_of[op]) is None
           and not (op == 'attention' and config.dropout > 0) and (backward or op != 'cross_entropy')]
    cases = op_cases(ops, config, batch_size, dtype, device, recompute)
    print("kernels: measuring each op, Triton vs PyTorch, at this run's shapes"
          + (f" (cached in {cache_path})..." if cache_path else "..."))
    timings = choose(cases, dtype, compile, device, cache_path, backward)
    for op, r in timings.items():
        times = '' if r['torch_ms'] is None else (
            f" (GPU time per call: Triton {r['triton_ms'] or float('nan'):.3f} ms, PyTorch {r['torch_ms']:.3f} ms)")
        print(f"  {'WARNING: ' if r['failed'] else ''}{op}: {r['impl']}{times}{', ' + r['why'] if r['why'] else ''}")
    return {op: r['impl'] for op, r in timings.items()}, timings


def op_cases(ops, config, B, dtype, device, recompute='none'):
    """{op: (shapes as text, make() -> inputs, fn(backend) -> f(*inputs) -> outputs)}: the ops as the
    model calls them (model.py), at batch B x config.block_size; the loss with the model's chunk; GELU
    in the form the model asks for, or the whole MLP where the model runs it as one op (kernels.gelu_mlp)."""
    T, C, H, V = config.block_size, config.n_embd, config.mlp_hidden, config.vocab_size
    nh, nkv = config.n_head, config.n_kv_head
    hs = C // nh
    act = lambda *s: torch.randn(*s, device=device, dtype=dtype, requires_grad=True)
    par = lambda n: (1 + 0.1 * torch.randn(n, device=device)).requires_grad_()
    # weights in the activations' dtype: the model's fp32 weights are cast first, on either side, and not timed here
    weight = lambda n, k: (torch.randn(n, k, device=device) * k ** -0.5).to(dtype).requires_grad_()
    cos, sin = (t.to(device) for t in rotary_tables(hs, T))
    chunk = model_chunk_bytes(V, recompute != 'none')
    fused_loss = lambda x, w, y: kernels.linear_cross_entropy(x, w, y, ignore_index=-1, chunk_bytes=chunk,
                                                              backend='triton')
    cases = {
        # the norms' output in the dtype of the Linear it feeds, as the model asks under autocast
        'layer_norm': (f"{B}x{T}x{C}", lambda: [act(B, T, C), act(B, T, C), par(C), par(C) if config.bias else None],
                       lambda be: lambda u, x, w, b: kernels.layer_norm(u, w, b, 1e-5, residual=x, out_dtype=dtype,
                                                                        backend=be)),
        'rms_norm': (f"{B}x{T}x{C}", lambda: [act(B, T, C), act(B, T, C), par(C)],
                     lambda be: lambda u, x, w: kernels.rms_norm(u, w, 1e-6, residual=x, out_dtype=dtype, backend=be)),
        'gelu': (f"{B}x{T}x{H} {config.gelu_approximate}", lambda: [act(B, T, H), par(H) if config.bias else None],
                 lambda be: lambda h, b: kernels.gelu(h, b, config.gelu_approximate, backend=be)),
        # views of one projection, read in place, as in the model (the gradient reaches the projection)
        'swiglu': (f"{B}x{T}x{H}", lambda: [act(B, T, 2 * H)],
                   lambda be: lambda fc: kernels.swiglu(fc, backend=be)),
        # both on the packed projection: PyTorch's side includes its concatenations of q, k, v and their gradients
        'rotary': (f"{B}x{nh}+{nkv}x{T}x{hs} packed", lambda: [act(B, T, nh + 2 * nkv, hs), cos, sin],
                   lambda be: lambda qkv, c, s: kernels.rotary_qkv(qkv, nh + nkv, c, s, backend=be)),
        'attention': (f"{B}x{nh}/{nkv}x{T}x{hs} packed", lambda: [act(B, T, nh + 2 * nkv, hs)],
                      lambda be: lambda qkv: kernels.flash_attention_qkv(qkv, nh, causal=True, backend=be)),
        'cross_entropy': (f"{B}x{T}x{C} V={V} chunk={chunk}",
                          lambda: [act(B, T, C), weight(V, C), torch.randint(V, (B, T), device=device)],
                          lambda be: fused_loss if be == 'triton' else kernels.unfused_cross_entropy),
    }
    if config.gelu_mlp and recompute != 'activation':  # the model's MLP is then kernels.gelu_mlp, one op
        cases['gelu'] = (f"{B}x{T}x{C}->{H}->{C} MLP tanh", lambda: [act(B, T, C), weight(H, C), weight(C, H)],
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
    """Median milliseconds of fn() after warm-up calls; CUDA events where there is a GPU.
    wait_each: the host waits for each call to end before it launches the next, as nanoGPT's
    bench waits on loss.item() every step. Otherwise the calls run back to back with an event
    between each two and one wait at the end, as a training loop runs between its logs."""
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


def graph_ms(fn, calls=10, prepare=None):
    """GPU milliseconds per fn() without launch overhead: `calls` calls captured in one CUDA graph,
    as StepGraph records a step (cuBLAS without its workspace), and replayed; prepare() first, on the
    capture's stream (a backward must run where its forward ran). None on a CPU or where capture
    fails (an op that synchronises)."""
    if not torch.cuda.is_available():
        return None
    graph, capturing = None, False
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), cublas_without_workspace():
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


def peak_mib(fn):
    """MiB that one fn() allocates at its peak beyond what was allocated before it, on the current
    CUDA device; None without a GPU."""
    if not torch.cuda.is_available():
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - before) / 2**20


def gpu_ms(f, inputs, backward, reps=10):
    """GPU milliseconds per call of f, from a CUDA graph's replay, or timed call by call where
    there is no GPU or the capture failed."""
    run = lambda: _run(f, inputs, backward)
    return graph_ms(run) or time_ms(run, reps)


def compare(make, fn, compile, backward=True):
    """dict(impl, triton_ms, torch_ms, why, failed) for one op: if the two agree, the one of less
    GPU time; failed: the Triton kernel raised or disagreed, and PyTorch stands in."""
    inputs = make()
    impls = {be: torch.compile(fn(be)) if compile else fn(be) for be in ('torch', 'triton')}
    want = _run(impls['torch'], inputs, backward)
    torch_ms = gpu_ms(impls['torch'], inputs, backward)
    lost = lambda why: dict(impl='torch', triton_ms=None, torch_ms=torch_ms, why=why, failed=True)
    try:
        got = _run(impls['triton'], inputs, backward)
        off = max(((g.float() - w.float()).abs().max() / (w.float().abs().max() + 1e-6)).item()
                  for g, w in zip(got, want) if g is not None and w is not None)
        if not off <= AGREE:  # NaN too
            return lost(f"Triton off by {off:.2g} of the output's scale")
        triton_ms = gpu_ms(impls['triton'], inputs, backward)
    except Exception as e:  # a kernel that cannot compile or launch here loses
        return lost(f"Triton failed: {type(e).__name__}: {str(e)[:120]}")
    return dict(impl='triton' if triton_ms < torch_ms else 'torch', triton_ms=triton_ms, torch_ms=torch_ms,
                why=None, failed=False)


def cache_key(op, shapes, dtype, compile, backward, device):
    gpu = torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'
    # a workspace the user set changes which kernels cuBLAS picks; without one, ops are timed as StepGraph
    # records a step, without a workspace
    workspace = os.environ.get('CUBLAS_WORKSPACE_CONFIG', 'none')
    return (f"{gpu} | cuBLAS workspace {workspace} | torch {torch.__version__} | "
            f"triton {triton.__version__ if TRITON_AVAILABLE else None} | {op} {shapes} {str(dtype).split('.')[-1]} | "
            f"compile={compile} | {'fwd+bwd' if backward else 'fwd'} | v13")


def choose(cases, dtype, compile, device, cache_path=CACHE_PATH, backward=True):
    """{op: dict(impl, triton_ms, torch_ms, why, failed)} for the op_cases, from the cache at cache_path
    (None: no cache) or measured. PyTorch everywhere where Triton cannot run."""
    device = torch.device(device)
    reason = why_not_triton_on(device.type)
    if reason:
        return {op: dict(impl='torch', triton_ms=None, torch_ms=None, why=reason, failed=False) for op in cases}
    cache = load_cache(cache_path)
    chosen, new = {}, False
    for op, (shapes, make, fn) in cases.items():
        key = cache_key(op, shapes, dtype, compile, backward, device)
        if key not in cache:
            # its own random numbers: the run's seeded state stays as it was
            with torch.random.fork_rng(devices=[device] if device.type == 'cuda' else []), \
                    torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):
                cache[key], new = compare(make, fn, compile, backward), True
        chosen[op] = cache[key]
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
