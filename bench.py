"""
Benchmarks of GPT training with the Triton kernels against plain PyTorch, every variant
in one run on one device; results are printed and written to bench_dir.
$ python bench.py                        # end to end: GPT-2 124M, batch 12x1024, bf16, random tokens; the
                                         # baseline (PyTorch ops) and the kernels ('auto', measured here), each
                                         # eager and compiled, and the kernels' whole step as one CUDA graph
                                         # ('graphed'): ms/iter, tokens/s, MFU, memory, loss -> bench.json
$ python bench.py config/train_gpt2.py   # the model and batch of a training config (its other keys unused)
$ python bench.py --arch=llama --n_kv_head=4
$ python bench.py --nanogpt=../nanoGPT/model.py  # nanoGPT's own model too, eager and compiled
$ python bench.py --sustained_steps=300  # and each variant sustained, as in a long run: ms and joules a step
$ python bench.py --kernels              # every op alone, at the model's shapes and swept (bench_kernels.py):
                                         # kernels.csv, kernels.json, a PNG per op
$ python bench.py --profile              # a Chrome trace of a few training steps, and GPU time per kernel
$ python bench.py --memory               # where a training step's peak memory sits, by the line that allocated it
$ python bench.py --optim                # AdamW (ours, torch's) vs Muon: what the optimizer adds to a step
$ python bench.py --tune                 # the kernels' tile settings, timed
$ python bench.py --startup              # time to first step: train.py config/train_gpt2.py, cold caches then warm twice
Without CUDA it says so and runs what it can on the CPU (eager, a small model).
"""
import gc
import os
import contextlib
import importlib.util
import json
import time
import itertools
import types
import collections
import shlex

import torch
from torch.autograd import DeviceType

from kernels import backend, choose, newton_schulz
from kernels.backend import cublas_without_workspace, gpu_peak_flops
from kernels.choose import time_ms
from model import GPTConfig, GPT, RECOMPUTE, compile_model
from step_graph import StepGraph
from configurator import configure, fail, device_and_autocast, user_errors
import bench_kernels
import bench_memory
import bench_startup

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
gelu_approximate = 'none'  # gpt2's GELU, every variant: 'none' (erf) as nanoGPT, 'tanh' as GPT-2 (model.py)
dtype = 'bfloat16'
warmup_steps = 10  # untimed steps first: compilation, autotuning, allocator warm-up
timed_steps = 30
# the GPU at its power cap, as in a long run, where a step's time follows the energy it takes
sustained_steps = 0  # each variant then N steps back to back after N/2 more: ms and (NVML) joules a step; 0: none
steps = None  # the end-to-end table; None: when no other part below is asked for
# the end-to-end variants to run, comma-separated (e.g. 'baseline compiled,kernels compiled graphed'); '' = the
# default six (eight with nanogpt)
variants = ''
nanogpt = ''  # nanoGPT's own model.py (a karpathy/nanoGPT checkout), unmodified: 'nanogpt eager', 'nanogpt compiled'
recompute = 'none'  # the kernels variants' recompute (model.RECOMPUTE); the baselines keep everything
autocast_residual = False  # the kernels variants' residual stream in bf16; the baselines keep nanoGPT's fp32 stream
fp8 = False  # the kernels variants' block products (forward and dx) in fp8 (kernels/linear.py); baselines' bf16
# the kernels variants' per-op overrides use_triton_<name>, as train.py's, for each name in choose.OVERRIDES
# (layer_norm, rms_norm, rotary, mlp: the MLP's GELU or SwiGLU, attention, cross_entropy): True or False
# decides the op, None measures it ('auto')
globals().update({f'use_triton_{name}': None for name in choose.OVERRIDES})
kernels = False  # every op alone, swept (bench_kernels.py)
kernel_ops = ''  # with kernels or tune: only these ops, comma-separated (e.g. 'layer_norm,attention'); '' = all
profile = False  # a Chrome trace of profile_steps training steps of profile_variant, and GPU time per kernel
profile_steps = 3
profile_variant = 'kernels compiled'  # one of the variants
memory = False  # where memory_variant's training step peaks: the tensors live at its peak, by where allocated (CUDA)
# one of the variants; a graphed one is recorded un-graphed (a replay allocates nothing), its cuBLAS as StepGraph's
memory_variant = 'kernels compiled'
optim = False  # AdamW (kernels.AdamW, torch's fused step) vs Muon
tune = False  # each kernel's tile settings (module constants), timed
startup = False  # time to first step: train.py with startup_config, cold caches then warm twice (bench_startup.py)
startup_config = 'config/train_gpt2.py'
startup_args = ''  # more of train.py's arguments for startup, e.g. '--compile=False'
loss_tolerance = 0.02  # the variants' losses after the same steps must agree this closely
bench_dir = 'bench_out'  # results: bench.json, kernels.csv/json and plots, trace.json, profile.txt
seed = 1337
# -----------------------------------------------------------------------------
config = configure(globals(), skip_unknown_in_files=True)
steps = not (kernels or profile or optim or tune or memory or startup) if steps is None else steps
cuda = torch.cuda.is_available()
device = 'cuda' if cuda else 'cpu'
workspace_config = os.environ.get('CUBLAS_WORKSPACE_CONFIG') if cuda else None  # the user's: every variant runs with it
if timed_steps < 1 or warmup_steps < 0:
    fail(f"timed_steps={timed_steps} and warmup_steps={warmup_steps}: at least 1 and 0")
if kernels and (why := backend.why_not_triton_on(device)):  # (the interpreter's times are none of a GPU's)
    fail(f"kernels=True times the Triton kernels, and here {why}")
if not cuda:
    with user_errors():  # the model asked for, checked before the stand-in replaces it (on a GPU: gptconf below)
        GPTConfig(n_layer=n_layer, n_head=n_head, n_kv_head=n_kv_head, n_embd=n_embd, arch=arch)
    n_kv_head = n_kv_head and max(1, 4 * n_kv_head // n_head)  # the asked grouping of heads, in 4 heads
    batch_size, block_size, vocab_size, n_layer, n_head, n_embd, dtype = 4, 64, 512, 2, 4, 64, 'float32'
    warmup_steps, timed_steps = min(warmup_steps, 2), min(timed_steps, 5)
    print(f"no CUDA here: a small model on the CPU whatever the settings (2 layers, 4 heads, {n_kv_head or 4} of "
          f"keys and values, 64 wide, batch 4 x 64, fp32, {warmup_steps} + {timed_steps} steps; train.py's the same "
          f"for --startup), eager, every op PyTorch's; its times are not GPU times, its ratios say nothing of a GPU's")
    config.update(batch_size=batch_size, block_size=block_size, vocab_size=vocab_size, n_layer=n_layer, n_head=n_head,
                  n_kv_head=n_kv_head, n_embd=n_embd, dtype=dtype, warmup_steps=warmup_steps, timed_steps=timed_steps)
ptdtype = device_and_autocast(device, dtype)[2]  # the dtype key checked as the other scripts check it
dtype = str(ptdtype).removeprefix('torch.')  # ('auto' resolved)
gpu_name, peak_flops = gpu_peak_flops(device)
torch.backends.cuda.matmul.allow_tf32 = True
os.makedirs(bench_dir, exist_ok=True)
triton_version = backend.triton.__version__ if backend.TRITON_AVAILABLE else None
header = dict(device=gpu_name, torch=torch.__version__, triton=triton_version, dtype=dtype,
              cublas_workspace_config=workspace_config, gelu_approximate=gelu_approximate,
              date=time.strftime('%Y-%m-%d'))
print(f"device: {gpu_name}, torch {header['torch']}, triton {header['triton'] or 'not installed'}, dtype {dtype}"
      + (f", CUBLAS_WORKSPACE_CONFIG={workspace_config}" if workspace_config else '')
      + (f", GELU's {gelu_approximate} form in every variant" if gelu_approximate != 'none' else ''))
if nanogpt and gelu_approximate != 'none':
    fail("nanoGPT's own model has the exact GELU: gelu_approximate='none' with nanogpt")
if fp8 and (recompute != 'none' or optim):  # the fp8 products read the copies AdamW keeps (model.py)
    fail("fp8=True reads the copies AdamW keeps: not with recompute, nor with --optim's other steps")

def sync():
    if cuda:
        torch.cuda.synchronize()

def energy_joules():
    """The GPU's energy counter in joules (NVML, the device found as torch.cuda.power_draw finds it), or None where
    it cannot be read (no CUDA, nvidia-ml-py or counter)."""
    if not cuda:
        return None
    try:
        import pynvml
        return pynvml.nvmlDeviceGetTotalEnergyConsumption(torch.cuda._get_pynvml_handler()) / 1e3
    except Exception:  # ImportError, RuntimeError or pynvml's NVMLError: the table says n/a
        return None

def table(title, head, rows):
    print(f"\n{title}")
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))

# the model and the variants ------------------------------------------------------
with user_errors():  # and a bad override refused before anything is measured
    gptconf = GPTConfig(block_size=block_size, vocab_size=vocab_size, n_layer=n_layer, n_head=n_head,
                        n_kv_head=n_kv_head, n_embd=n_embd, bias=bias, arch=arch, dropout=0.0,
                        gelu_approximate=gelu_approximate)
    overrides = choose.checked_overrides({n: config[f'use_triton_{n}'] for n in choose.OVERRIDES}, gptconf.arch)
torch.manual_seed(seed)
data = torch.randint(vocab_size, (warmup_steps + timed_steps, 2, batch_size, block_size), device=device)  # per step
ctx = torch.autocast(device, dtype=ptdtype, enabled=ptdtype != torch.float32)
tokens = batch_size * block_size
# '<baseline|kernels> <eager|compiled>[ graphed]'; graphed: the whole step replayed from one CUDA graph (step_graph.py);
# with nanogpt, 'nanogpt <eager|compiled>' first
ALL_VARIANTS = ([f"nanogpt {c}" for c in (['eager', 'compiled'] if cuda else ['eager'])] if nanogpt else []) + [
    f"{k} {c}{g}" for g in (['', ' graphed'] if cuda else ['']) for c in (['eager', 'compiled'] if cuda else ['eager'])
    for k in ('baseline', 'kernels')]
VARIANTS = [v for v in ALL_VARIANTS if not v.startswith('baseline') or not v.endswith('graphed')]  # run by default
MAIN = 'kernels compiled' if cuda else 'kernels eager'  # the variant of the optimizer table
for key, variant in (('memory', memory_variant), ('profile', profile_variant)):
    if config[key] and cuda and variant not in ALL_VARIANTS:
        fail(f"{key}_variant {variant!r} is not among {ALL_VARIANTS}")

def nanogpt_model():
    """nanoGPT's own GPT (its model.py at `nanogpt`, unmodified) with this run's config and seed, dressed
    for the table: no kernel choice, and MFU by GPT's count (nanoGPT's estimate_mfu assumes an A100)."""
    spec = importlib.util.spec_from_file_location('nanogpt_model', nanogpt)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(seed)
    model = module.GPT(module.GPTConfig(block_size=block_size, vocab_size=vocab_size, n_layer=n_layer, n_head=n_head,
                                        n_embd=n_embd, dropout=0.0, bias=bias))
    model.kernels = model.kernel_timings = None
    model.flops_per_token, model.estimate_mfu = (types.MethodType(f, model)
                                                 for f in (GPT.flops_per_token, GPT.estimate_mfu))
    return model.to(device)

def build(variant):
    """(model, the model as stepped: compiled or not) of a variant: 'baseline' runs PyTorch's
    ops, 'kernels' the faster of Triton and PyTorch per op as measured here for this kind of
    step (as train.py's kernels='auto'), 'nanogpt' nanoGPT's own model; the same initial weights for
    every variant of ours. Compiled, the baselines and nanoGPT take nanoGPT's plain torch.compile, the
    kernels variants train.py's compile_model."""
    setting, compiled = variant.split()[:2]
    compiled = compiled == 'compiled'
    if setting == 'nanogpt':  # what the baselines must match
        model = nanogpt_model()
    elif setting == 'baseline':  # PyTorch everywhere, as nanoGPT
        torch.manual_seed(seed)
        model = GPT(gptconf).to(device)
        model.kernel_timings = None
    else:
        with user_errors():
            measured, timings = (choose.measure(gptconf, batch_size, ptdtype, device, compiled, recompute, overrides)
                                 if cuda else (None, None))
            torch.manual_seed(seed)
            impl = choose.resolve('auto', gptconf, device, overrides, measured)
        model = GPT(gptconf, impl, recompute=recompute, autocast_residual=autocast_residual, fp8=fp8).to(device)
        model.kernel_timings = timings
    if not compiled:
        return model, model
    return model, compile_model(model) if setting == 'kernels' else torch.compile(model)

def stepper(variant, step_model, optimizer):
    """(train_step(), the losses it appends to): the same batches in the same order for
    every variant, copied into the same input tensors (a CUDA graph reads them there)."""
    losses, batches = [], itertools.cycle(data)
    X, Y = torch.empty_like(data[0, 0]), torch.empty_like(data[0, 1])
    loss = torch.zeros((), device=device)

    def step():
        torch.compiler.cudagraph_mark_step_begin()  # CUDA graphs (reduce-overhead): a new step, outputs may be reused
        with ctx:
            _, step_loss = step_model(X, Y)
        step_loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss.copy_(step_loss.detach())  # in place: a graph's replay writes it there

    run = StepGraph(step, optimizer) if variant.endswith('graphed') else step

    def train_step():
        for buffer, batch in zip((X, Y), next(batches)):
            buffer.copy_(batch)
        run()
        losses.append(loss.clone())

    return train_step, losses

def sustained(train_step):
    """{ms a step over sustained_steps back to back, after half as many that bring the GPU to its power cap;
    joules a step where NVML reads the GPU's energy counter, else None}."""
    for _ in range(sustained_steps // 2):
        train_step()
    sync()
    before = energy_joules()
    ms = time_ms(train_step, sustained_steps, warmup=0, wait_each=False)
    after = energy_joules()  # time_ms has waited for the last step
    joules = None if before is None or after is None else (after - before) / sustained_steps
    return dict(ms_sustained=ms, joules_per_step=joules)

def drop_leftovers():
    """Free what nothing uses any more: garbage, and cuBLAS's workspaces (one per stream that ran a matmul,
    32-160 MiB a variant, kept allocated until freed), so that a peak counts only what its own steps allocate."""
    gc.collect()
    if cuda:
        torch._C._cuda_clearCublasWorkspaces()
        torch.cuda.empty_cache()

def make_optimizer(model, muon=None, step=None):
    """AdamW as nanoGPT's bench sets it up, or with muon=its settings, Muon with AdamW for the rest; step: the
    optimizer's implementation ('triton' or 'torch', written into the model's map), or the model's own."""
    if not isinstance(model, GPT):  # nanoGPT's own model
        return model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), device)
    model.kernels['optimizer'] = step or model.kernels['optimizer']
    with user_errors():  # a setting this step cannot take (fp8 without AdamW's copies): one line, as train.py's
        return model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), device, muon=muon, matmul_dtype=ptdtype)

results = dict(header, config=config)

# 1. end to end ---------------------------------------------------------------------
if steps:
    runs = {}
    asked = [v.strip() for v in variants.split(',')] if variants else VARIANTS
    if set(asked) - set(ALL_VARIANTS):
        fail(f"variants {sorted(set(asked) - set(ALL_VARIANTS))} are not among {ALL_VARIANTS}"
             + ('' if cuda else ' (no compiled or graphed variants without CUDA)'))
    if recompute not in RECOMPUTE:
        fail(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
    if nanogpt and (arch != 'gpt2' or not os.path.isfile(nanogpt)):
        fail(f"nanogpt={nanogpt!r}: " + ("nanoGPT's model is GPT-2 only" if arch != 'gpt2' else "no such file"))
    chosen = [v for v in ALL_VARIANTS if v in asked]
    for i, variant in enumerate(chosen):
        # what the last variant left allocated would count in this one's peak (its compiled graphs, cuBLAS's
        # workspaces: docs/perf-notes.md); dropped, and what stays is reported
        torch._dynamo.reset()
        drop_leftovers()
        resident = torch.cuda.memory_allocated() / 2 ** 20 if cuda else 0.0
        print(f"\n[{i + 1}/{len(chosen)}] {variant}: building, {warmup_steps} warm-up + {timed_steps} timed steps"
              + (f" ({resident:,.0f} MiB allocated before it)" if cuda else ""), flush=True)
        model, step_model = build(variant)
        train_step, losses = stepper(variant, step_model, make_optimizer(model))
        drop_leftovers()  # the kernels variants' timing of each op (kernels/choose.py) ran on side streams too
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        ms = time_ms(train_step, timed_steps, warmup=warmup_steps)
        final_loss = losses[-1].item()  # after the same steps in every variant
        peak_mem_mib = torch.cuda.max_memory_allocated() / 2 ** 20 if cuda else None
        # the same number of steps again, not waited for one by one: a step that its host launches late (the baselines'
        # hundreds of launches) shows less of its host time here (docs/perf-notes.md)
        ms_back_to_back = time_ms(train_step, timed_steps, warmup=0, wait_each=False)
        runs[variant] = dict(ms=ms, ms_back_to_back=ms_back_to_back, tokens_per_s=tokens / ms * 1e3,
                             mfu=model.estimate_mfu(tokens, ms / 1e3, peak_flops),
                             peak_mem_mib=peak_mem_mib, resident_before_mib=resident, first_loss=losses[0].item(),
                             final_loss=final_loss,
                             kernels=model.kernels, kernel_timings=model.kernel_timings)
        print(f"  {ms:.2f} ms/iter ({ms_back_to_back:.2f} back to back), loss {final_loss:.4f}", flush=True)
        if sustained_steps:
            runs[variant].update(sustained(train_step))
            print(f"  sustained: {runs[variant]['ms_sustained']:.2f} ms a step", flush=True)
        del model, step_model, train_step, losses
    eager, compiled = runs.get('baseline eager'), runs.get('baseline compiled')
    nano = next((v for v in ('nanogpt compiled', 'nanogpt eager') if v in runs), None)  # the issues' yardstick
    # what the losses are compared with
    reference = next(v for v in ('baseline eager', 'baseline compiled', chosen[0]) if v in runs)
    results['loss_reference'], results['nanogpt_reference'] = reference, nano
    for r in runs.values():
        r['vs_baseline_eager'] = eager and eager['ms'] / r['ms']
        r['vs_baseline_compiled'] = compiled and compiled['ms'] / r['ms']
        r['vs_baseline_compiled_back_to_back'] = compiled and compiled['ms_back_to_back'] / r['ms_back_to_back']
        r['memory_vs_baseline_compiled'] = compiled and r['peak_mem_mib'] / compiled['peak_mem_mib']
        r['vs_nanogpt'] = nano and runs[nano]['ms'] / r['ms']
        r['memory_vs_nanogpt'] = nano and r['peak_mem_mib'] and r['peak_mem_mib'] / runs[nano]['peak_mem_mib']
        r['loss_diff'] = r['final_loss'] - runs[reference]['final_loss']
    worst = max(abs(r['loss_diff']) for r in runs.values())
    results['train_step'] = runs
    results['losses_agree'] = worst <= loss_tolerance
    n_a = lambda v, fmt: 'n/a' if v is None else fmt.format(v)
    graphed = any(v.endswith('graphed') for v in runs)
    table(f"Training step, {arch} {gptconf.n_layer}L {gptconf.n_embd}d, batch {batch_size}x{block_size}, {dtype}, "
          f"random tokens (a new batch each step, the same for every variant), AdamW (torch's fused step for the "
          f"baselines, kernels.AdamW's for the kernels variants)"
          + (f", the kernels variants with recompute='{recompute}'" if recompute != 'none' else '')
          + (", the kernels variants' residual stream in bf16" if autocast_residual else '')
          + (", the kernels variants' block products in fp8" if fp8 else '')
          + (f", CUBLAS_WORKSPACE_CONFIG={workspace_config} (every variant)" if workspace_config else
             ", the graphed variants recorded with cuBLAS without its workspace" if graphed else '')
          + f"; median of {timed_steps} steps after {warmup_steps} warm-up, each step waited for (as nanoGPT's "
          f"bench), then {timed_steps} more back to back (as a training loop between its logs); tokens/s and MFU "
          f"from ms/iter" + (f", MFU of {gpu_name}'s peak bf16 FLOP/s" if peak_flops else '')
          + f"; loss after the {warmup_steps + timed_steps} steps",
          ['variant', 'ms/iter', 'back to back', 'tokens/s', 'MFU', 'peak MiB', 'loss', f'loss - {reference}',
           'vs baseline eager', 'vs baseline compiled', 'vs compiled, back to back', 'memory vs compiled']
          + ([f'vs {nano}', f'memory vs {nano}'] if nano else []),
          [[v, f"{r['ms']:.2f}", f"{r['ms_back_to_back']:.2f}", f"{r['tokens_per_s']:,.0f}",
            n_a(r['mfu'] and 100 * r['mfu'], "{:.1f}%"), n_a(r['peak_mem_mib'], "{:,.0f}"), f"{r['final_loss']:.4f}",
            f"{r['loss_diff']:+.4f}"] + [n_a(r[k], "{:.2f}x") for k in ('vs_baseline_eager', 'vs_baseline_compiled',
                                         'vs_baseline_compiled_back_to_back', 'memory_vs_baseline_compiled')
                                         + (('vs_nanogpt', 'memory_vs_nanogpt') if nano else ())]
           for v, r in runs.items()])
    if sustained_steps:
        base = nano or next((v for v in ('baseline compiled', 'baseline eager') if v in runs), chosen[0])
        table(f"Sustained: {sustained_steps} steps back to back after {sustained_steps // 2} more, median ms a step; "
              f"joules a step from the GPU's energy counter (NVML)",
              ['variant', 'ms a step', 'J a step', 'W', f'vs {base}'],
              [[v, f"{r['ms_sustained']:.2f}", n_a(r['joules_per_step'], "{:.2f}"),
                n_a(r['joules_per_step'] and r['joules_per_step'] / r['ms_sustained'] * 1e3, "{:.0f}"),
                f"{runs[base]['ms_sustained'] / r['ms_sustained']:.2f}x"] for v, r in runs.items()])
    for v, r in runs.items():
        if r['kernel_timings'] is not None:
            triton_ops = [op for op, impl in r['kernels'].items() if impl == 'triton']
            print(f"{v}: Triton for " + (', '.join(triton_ops) or 'no op'))
    print(f"losses {'agree' if results['losses_agree'] else 'DO NOT agree'}: largest difference {worst:.4f} "
          f"(tolerance {loss_tolerance})")

# 2. each op alone (bench_kernels.py) --------------------------------------------------
kernel_sizes = (batch_size, block_size, n_embd, n_head, gptconf.n_kv_head, vocab_size,
                GPTConfig(n_embd=n_embd, n_head=n_head, arch='llama').mlp_hidden)
if kernels:
    print("\nEach op alone: forward, backward, forward+backward" + ('' if cuda else ' (CPU: eager, small sizes)'),
          flush=True)
    bench_kernels.sweep(kernel_sizes, ptdtype, device, bench_dir, kernel_ops, header)
if tune:
    if cuda:
        results['tune'] = bench_kernels.tune(kernel_sizes, ptdtype, device, kernel_ops)
    else:
        print("tune needs CUDA")

# 3. profile ------------------------------------------------------------------------
if profile:
    variant = profile_variant if profile_variant in ALL_VARIANTS else MAIN
    if variant != profile_variant:  # (on a GPU: refused above)
        print(f"profile_variant {profile_variant!r} is not among {ALL_VARIANTS} here: {MAIN} instead")
    print(f"\nprofile: {variant}, {warmup_steps} warm-up steps, then {profile_steps} steps traced", flush=True)
    model, step_model = build(variant)
    train_step, losses = stepper(variant, step_model, make_optimizer(model))
    for _ in range(warmup_steps):
        train_step()
    sync()
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    with torch.profiler.profile(activities=activities) as prof:
        t0 = time.perf_counter()
        for _ in range(profile_steps):
            train_step()
        sync()
        wall_us = (time.perf_counter() - t0) * 1e6 / profile_steps
    trace = os.path.join(bench_dir, 'trace.json')
    prof.export_chrome_trace(trace)
    # time per kernel on the GPU (per op's own CPU time without one), per step
    spent = collections.Counter()
    for e in prof.events():
        if cuda and e.device_type == DeviceType.CUDA and not e.is_user_annotation:
            spent[e.name] += e.device_time_total / profile_steps
        elif not cuda:
            spent[e.name] += e.self_cpu_time_total / profile_steps
    busy = sum(spent.values())
    lines = [f"{variant}, {gpu_name}: {wall_us / 1e3:.2f} ms per step, "
             f"{'GPU busy' if cuda else 'in ops'} {busy / 1e3:.2f} ms "
             f"({100 * busy / wall_us:.0f}%); {'kernels' if cuda else 'ops'} by time per step:",
             f"{'us/step':>10} {'share':>6}  name"]
    lines += [f"{us:10.1f} {100 * us / busy:5.1f}%  {name[:110]}" for name, us in spent.most_common(40)]
    with open(os.path.join(bench_dir, 'profile.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    print(f"wrote {trace} (open in chrome://tracing or ui.perfetto.dev) and {os.path.join(bench_dir, 'profile.txt')}")
    results['profile'] = dict(variant=variant, wall_ms=wall_us / 1e3, busy_ms=busy / 1e3,
                              per_kernel_us=dict(spent.most_common(100)))
    del model, step_model, train_step, losses

# 4. memory -------------------------------------------------------------------------
if memory and not cuda:
    print("\nmemory needs CUDA (the caching allocator's history)")
elif memory:
    graphed = memory_variant.endswith('graphed')
    print(f"\nmemory: {memory_variant}, {warmup_steps} warm-up steps, then one step recorded", flush=True)
    torch._dynamo.reset()  # what an earlier part of this run left (as between the end-to-end variants)
    model, step_model = build(memory_variant)
    drop_leftovers()  # and the kernels' timing of each op in build (kernels/choose.py), on side streams too
    train_step, losses = stepper(memory_variant.replace(' graphed', ''), step_model, make_optimizer(model))
    # a graphed variant's step un-graphed, with cuBLAS as StepGraph records it (no workspace to allocate)
    with cublas_without_workspace() if graphed else contextlib.nullcontext():
        for _ in range(warmup_steps):
            train_step()
        gc.collect()  # not drop_leftovers(): an un-graphed step's cuBLAS workspace is part of what it runs with
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        events = bench_memory.record_step(train_step)
        peak = torch.cuda.max_memory_allocated()
    lines, own, rows = bench_memory.report(f"{memory_variant}{' (recorded un-graphed)' if graphed else ''}, {gpu_name}",
                                           events, before, peak)
    with open(os.path.join(bench_dir, 'memory.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    print(f"wrote {os.path.join(bench_dir, 'memory.txt')}")
    results['memory'] = dict(variant=memory_variant, peak_mib=peak / 2 ** 20, before_mib=before / 2 ** 20,
                             step_own_mib=own / 2 ** 20,
                             live_at_peak=[dict(where=key, mib=size / 2 ** 20, count=n) for key, size, n in rows])
    del model, step_model, train_step, losses, events

# 5. the optimizer ------------------------------------------------------------------
def optimizer_rows():
    """For each optimizer, on the model with the kernels (compiled on the GPU): the whole
    training step; what the optimizer adds to it (the step minus forward+backward alone:
    inside a step its launches queue behind the backward's kernels); its step alone
    (eager, as train.py runs it, on an idle queue, so every launch gap shows); and for
    Muon the Newton-Schulz stacks alone."""
    muon = dict(lr=0.02)
    choices = {'AdamW': {}, "AdamW, torch's step": dict(step='torch'),
               'Muon, Newton-Schulz in PyTorch': dict(muon=muon, step='torch')}
    if cuda and backend.TRITON_AVAILABLE:
        choices['Muon, Newton-Schulz in Triton'] = dict(muon=muon, step='triton')
    rows, out = [], {}
    model, step_model = build(MAIN)  # one model (and compilation) for every optimizer
    X, Y = data[0]
    for name, setting in choices.items():
        print(f"  {name}...", flush=True)
        optimizer = make_optimizer(model, **setting)
        train_step, _ = stepper(MAIN, step_model, optimizer)

        def forward_backward():
            with ctx:
                _, loss = step_model(X, Y)
            loss.backward()
        step_ms = time_ms(train_step, timed_steps, warmup=warmup_steps)
        # for each optimizer: AdamW's copies of the matrices (configure_optimizers) change the forward and backward
        fwd_bwd_ms = time_ms(lambda: (forward_backward(), model.zero_grad(set_to_none=True)), timed_steps)
        forward_backward()  # gradients for the optimizer's step alone
        opt_ms = time_ms(optimizer.step, timed_steps)
        optimizer.zero_grad(set_to_none=True)
        ns_ms = None
        if 'muon' in setting:  # the stacks Muon orthogonalises, as it builds them
            shapes = collections.Counter(tuple(sorted(p.shape)) for p in optimizer.param_groups[0]['params'])
            stacks = [torch.randn(n, *shape, device=device) for shape, n in shapes.items()]
            ns_ms = time_ms(lambda: [newton_schulz(s, backend=optimizer.backend) for s in stacks], timed_steps)
        added = step_ms - fwd_bwd_ms
        out[name] = dict(step_ms=step_ms, forward_backward_ms=fwd_bwd_ms, added_ms=added, share=added / step_ms,
                         optimizer_alone_ms=opt_ms, newton_schulz_ms=ns_ms,
                         cuda_graph_replays=getattr(optimizer, 'graph_replays', None))
        if getattr(optimizer, 'graphs', None) is not None:
            print(f"  {optimizer.graph_replays} Muon steps replayed from CUDA graphs")
        rows.append([name, f"{step_ms:.2f}", f"{fwd_bwd_ms:.2f}", f"{added:.2f}", f"{100 * added / step_ms:.1f}%",
                     f"{opt_ms:.2f}", '' if ns_ms is None else f"{ns_ms:.2f}"])
    return rows, out

if optim:
    print("\noptimizer step...", flush=True)
    rows, results['optimizer'] = optimizer_rows()
    table(f"Optimizer, {arch} {gptconf.n_layer}L {gptconf.n_embd}d, batch {batch_size}x{block_size}, {dtype}: "
          f"the whole "
          f"training step ({MAIN}) with each optimizer, its forward+backward alone, what the optimizer adds to the "
          f"step over it and its share; the optimizer's step alone (eager, idle queue); medians of {timed_steps}, ms",
          ['optimizer', 'train step', 'forward+backward', 'optimizer adds', 'share', 'step alone',
           'Newton-Schulz alone'],
          rows)

if startup:
    small = [] if cuda else [f'--{k}={v}' for k, v in dict(  # the CPU's stand-in model, as above
        n_layer=n_layer, n_head=n_head, n_kv_head=n_kv_head, n_embd=n_embd, batch_size=batch_size,
        block_size=block_size, gradient_accumulation_steps=1, eval_iters=2, compile=False).items()]
    results['startup'] = bench_startup.run(startup_config, small + shlex.split(startup_args), bench_dir)

if steps or profile or optim or tune or startup or (memory and cuda):
    with open(os.path.join(bench_dir, 'bench.json'), 'w') as f:
        json.dump(results, f, indent=2)
    print(f"\nwrote {os.path.join(bench_dir, 'bench.json')}")
