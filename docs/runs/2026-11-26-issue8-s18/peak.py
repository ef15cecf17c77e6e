"""Where a training step's peak memory sits: the step of bench.py's kernels variants (LLaMA or GPT-2,
recompute as asked), run un-graphed with the ops chosen as for the graphed variant, its allocations
recorded (torch.cuda.memory._record_memory_history) for one step after warm-up, and the tensors live at
the step's peak grouped by where they were allocated (our files' or Inductor's generated code's line).
$ python peak.py arch=llama compiled=1 recompute=activation loss_chunk_mib=0 out=peak.txt"""
import collections, linecache, os, sys

sys.path.insert(0, os.getcwd())
import torch
from model import GPTConfig, GPT, measure_kernels, compile_model, cublas_without_workspace

args = dict(a.split('=', 1) for a in sys.argv[1:])
arch, compiled = args.get('arch', 'llama'), args.get('compiled', '1') == '1'
recompute, chunk = args.get('recompute', 'activation'), float(args.get('loss_chunk_mib', '0')) or None
out = open(args.get('out', '/dev/stdout'), 'w')
cublas_without_workspace()
conf = GPTConfig(block_size=1024, vocab_size=50304, n_layer=12, n_head=12, n_kv_head=4 if arch == 'llama' else None,
                 n_embd=768, bias=False, arch=arch, dropout=0.0)
model_args = dict(recompute=recompute, autocast_residual=True, loss_chunk_mib=chunk)
overrides, _ = measure_kernels(conf, 12, torch.bfloat16, 'cuda', compiled, 'kernels_cache.json', {}, graphed=True,
                               model_args=model_args)
torch.manual_seed(1337)
model = GPT(conf, kernels='auto', device_type='cuda', overrides=overrides, **model_args).cuda()
step_model = compile_model(model) if compiled else model
opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
X = torch.randint(50304, (12, 1024), device='cuda')
Y = torch.randint(50304, (12, 1024), device='cuda')

def step():
    with torch.autocast('cuda', dtype=torch.bfloat16):
        _, loss = step_model(X, Y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

for _ in range(4):
    step()
torch.cuda.synchronize()
torch.cuda.empty_cache()
torch.cuda.reset_peak_memory_stats()
before = torch.cuda.memory_allocated()
torch.cuda.memory._record_memory_history(max_entries=2_000_000, stacks='python')
step()
torch.cuda.synchronize()
snap = torch.cuda.memory._snapshot()
torch.cuda.memory._record_memory_history(enabled=None)
peak_abs = torch.cuda.max_memory_allocated()
MiB = 2 ** 20
params = sum(p.numel() * p.element_size() for p in model.parameters())
state = sum(t.numel() * t.element_size() for s in opt.state.values() for t in s.values() if torch.is_tensor(t))
print(f"{arch} compiled={compiled} recompute={recompute} loss_chunk_mib={chunk} kernels={model.kernels}", file=out)
print(f"allocated before the step {before / MiB:,.0f} MiB (parameters {params / MiB:,.0f}, optimizer state "
      f"{state / MiB:,.0f}); the step's peak {peak_abs / MiB:,.0f} MiB", file=out)

events = snap['device_traces'][torch.cuda.current_device()]

def key(e):
    """The innermost frame in this repository or in Inductor's code, with its source line."""
    for f in e.get('frames', []):
        fn = f['filename']
        if ('torchinductor' in fn or os.getcwd() in fn or fn.startswith(('model.py', 'kernels'))) and 'peak.py' not in fn:
            src = linecache.getline(fn, f['line']).strip()
            return f"{os.path.basename(fn)}:{f['line']} {f['name']} | {src[:110]}"
    return 'elsewhere: ' + ' < '.join(f"{os.path.basename(f['filename'])}:{f['line']}" for f in e.get('frames', [])[:4])

live, cur, peak, at = {}, 0, 0, None
for i, e in enumerate(events):
    if e['action'] == 'alloc':
        live[e['addr']] = e
        cur += e['size']
    elif e['action'] == 'free_completed' and e['addr'] in live:
        cur -= live.pop(e['addr'])['size']
    if cur > peak:
        peak, at = cur, i
live = {}
for e in events[:at + 1]:
    if e['action'] == 'alloc':
        live[e['addr']] = e
    elif e['action'] == 'free_completed':
        live.pop(e['addr'], None)
print(f"the step's own allocations at its peak: {peak / MiB:,.1f} MiB (event {at} of {len(events)}); "
      f"before + that = {(before + peak) / MiB:,.0f} MiB", file=out)
print(f"the allocation that made the peak: {events[at]['size'] / MiB:.1f} MiB at {key(events[at])}", file=out)
for f in events[at].get('frames', [])[:14]:
    print(f"    {f['filename']}:{f['line']} {f['name']}", file=out)
groups = collections.defaultdict(lambda: [0, 0])
for e in live.values():
    g = groups[key(e)]
    g[0] += e['size']
    g[1] += 1
print("live at the peak, by where allocated (MiB, count):", file=out)
for k, (size, n) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:40]:
    print(f"{size / MiB:9.1f} {n:4d}  {k}", file=out)
