"""
Benchmark, in one run on one device:
1. full training steps (forward, backward, AdamW) of the same model with the Triton
   kernels off (the PyTorch baseline) and on, each eager and under torch.compile;
2. each Triton op against PyTorch eager and torch.compile, forward and forward+backward.
$ python bench.py                                   # GPT-2 124M, batch 12x1024, bf16, random tokens
$ python bench.py --arch=llama --n_kv_head=4 --json_out=bench.json
On a machine without CUDA it says so and runs a small model on the CPU, eager only.
"""
import json
import time
import itertools
import statistics

import torch
import torch.nn.functional as F

import kernels
from model import GPTConfig, GPT, gpu_peak_flops
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
ops = True  # also the per-op table
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

def time_ms(fn, reps, warmup=3):
    """Median milliseconds of fn() after warm-up calls; CUDA events on the GPU."""
    for _ in range(warmup):
        fn()
    sync()
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
variants = [(k, c) for c in ([False, True] if cuda else [False]) for k in ('torch', 'auto')]
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
base = step_results['baseline eager']['ms']
for name, r in step_results.items():
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

def bench_layer_norm(M, N):
    """kernels.layer_norm against F.layer_norm eager and compiled at (M, N): time per call
    as an eager loop sees it (launch overhead included), and GPU time (CUDA graph).
    Inputs rotate among copies that overflow the L2 cache, so bandwidth is DRAM's."""
    es = torch.finfo(ptdtype).bits // 8
    copies = max(2, -(-200 * 2**20 // (3 * M * N * es)))
    xs = [torch.randn(M, N, device=device, dtype=ptdtype, requires_grad=True) for _ in range(copies)]
    dys = [torch.randn(M, N, device=device, dtype=ptdtype) for _ in range(copies)]
    w = torch.randn(N, device=device, dtype=ptdtype, requires_grad=True)
    b = torch.randn(N, device=device, dtype=ptdtype, requires_grad=True)
    impls = {'torch': lambda x: kernels.layer_norm_ref(x, w, b),
             'triton': lambda x: kernels.layer_norm(x, w, b, backend='triton')}
    if cuda:
        compiled = torch.compile(kernels.layer_norm_ref, dynamic=False)
        impls['compile'] = lambda x: compiled(x, w, b)
    # minimum traffic: the forward reads x and writes y; the backward reads x, dy, writes dx
    nbytes = {'fwd': 2 * M * N * es, 'fwdbwd': 5 * M * N * es}
    out, rows = {}, []
    for pass_ in ('fwd', 'fwdbwd'):
        for impl, f in impls.items():
            calls = itertools.count()

            def run():
                k = next(calls) % copies
                y = f(xs[k])
                return y if pass_ == 'fwd' else torch.autograd.grad(y, (xs[k], w, b), dys[k])

            call, gpu = time_ms(run, 50), graph_ms(run)
            out[f'{impl}_{pass_}'] = dict(call_ms=call, gpu_ms=gpu, gpu_GBps=gpu and nbytes[pass_] / gpu / 1e6)
        t = {impl: out[f'{impl}_{pass_}']['gpu_ms'] or out[f'{impl}_{pass_}']['call_ms'] for impl in impls}
        rows.append([f"{M}x{N}", pass_] + [
            f"{out[f'{impl}_{pass_}']['call_ms'] * 1e3:.0f} / "
            + (f"{t[impl] * 1e3:.1f} ({nbytes[pass_] / t[impl] / 1e6:,.0f})" if cuda else 'n/a') for impl in impls]
            + [f"{t['torch'] / t['triton']:.2f}x", f"{t['compile'] / t['triton']:.2f}x" if cuda else 'n/a'])
    y_t, y_k = impls['torch'](xs[0]), impls['triton'](xs[0])
    (dx_t,), (dx_k,) = torch.autograd.grad(y_t, xs[0], dys[0]), torch.autograd.grad(y_k, xs[0], dys[0])
    out['max_abs_diff_y'] = (y_t.float() - y_k.float()).abs().max().item()
    out['max_abs_diff_dx'] = (dx_t.float() - dx_k.float()).abs().max().item()
    rows[0].append(f"{out['max_abs_diff_y']:.1e}")
    rows[1].append(f"{out['max_abs_diff_dx']:.1e}")
    return out, rows, list(impls)

if ops and kernels.TRITON_AVAILABLE and (cuda or kernels.INTERPRET):
    shapes = [(batch_size * block_size, n_embd), (4096, 1024), (4096, 4096), (4096, 16384)] if cuda else [(64, n_embd)]
    ln_rows, results['layer_norm'] = [], {}
    for M, N in shapes:
        print(f"layer_norm {M}x{N}...", flush=True)
        r, rows, impls = bench_layer_norm(M, N)
        results['layer_norm'][f"{M}x{N}"] = r
        ln_rows += rows
    table(f"LayerNorm, {dtype}. Each implementation: us per call in an eager loop / us of GPU time (CUDA graph) "
          f"(GB/s of minimum traffic). Speedups of Triton in GPU time. max |Triton - torch| of y (fwd), dx (fwdbwd)",
          ['shape', 'pass'] + impls + ['vs eager', 'vs compile', 'max diff'], ln_rows)
elif ops:
    print("\nop table skipped: Triton cannot run here (no CUDA, and TRITON_INTERPRET is not set)")

table(f"Training step, {arch} {gptconf.n_layer}L {gptconf.n_embd}d, batch {batch_size}x{block_size}, {dtype}, "
      f"median of {timed_steps} steps after {warmup_steps} warm-up. Loss of the first step (same weights, same "
      f"batch: must agree) and of the last (the same {warmup_steps + timed_steps} steps on one random batch: "
      f"drifts apart with bf16 rounding)",
      ['variant', 'ms/iter', 'tokens/s', 'MFU', 'peak MiB', 'first loss', 'last loss', 'vs baseline eager'], step_rows)
if json_out:
    with open(json_out, 'w') as f:
        json.dump(results, f, indent=2)
    print(f"\nwrote {json_out}")
