# Newton-Schulz (5 steps, bf16) for GPT-2 124M's block matrices on the GPU: PyTorch's reference
# one matrix at a time (48 calls), stacked per shape, and the Triton kernel stacked per shape;
# the symmetric product alone vs torch's bmm.
import sys, os, statistics, importlib
sys.path.insert(0, os.getcwd())
import torch
import kernels
NS = importlib.import_module("kernels.newton_schulz")

def graph_ms(fn, calls=5):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls): fn()
    ts = []
    for _ in range(15):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) / calls)
    return statistics.median(ts)

def eager_ms(fn, n=20):
    for _ in range(3): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)

print(torch.cuda.get_device_name())
shapes = {'attn.c_attn (2304,768)': (12, 2304, 768), 'attn.c_proj (768,768)': (12, 768, 768),
          'mlp.c_fc (3072,768)': (12, 3072, 768), 'mlp.c_proj (768,3072)': (12, 768, 3072)}
stacks = {k: torch.randn(s, device='cuda') for k, s in shapes.items()}
singles = [m for st in stacks.values() for m in st]
print(f"torch reference, 48 calls one matrix each: eager {eager_ms(lambda: [NS.newton_schulz_ref(m) for m in singles]):.2f} ms, "
      f"graph {graph_ms(lambda: [NS.newton_schulz_ref(m) for m in singles], 1):.2f} ms")
tot = {'torch': [0, 0], 'triton': [0, 0]}
for name, st in stacks.items():
    for impl in ('torch', 'triton'):
        e, g = eager_ms(lambda: kernels.newton_schulz(st, backend=impl)), graph_ms(lambda: kernels.newton_schulz(st, backend=impl))
        tot[impl][0] += e; tot[impl][1] += g
        print(f"{name:24s} stack of 12, {impl:6s}: eager {e:.3f} ms, graph {g:.3f} ms", flush=True)
for impl, (e, g) in tot.items():
    print(f"all 48 stacked per shape, {impl}: eager {e:.2f} ms, graph {g:.2f} ms")
# the fused pair: c_fc transposed is mlp.c_proj's shape, so 24 in one stack
st24 = torch.cat([stacks['mlp.c_fc (3072,768)'].mT, stacks['mlp.c_proj (768,3072)']])
for impl in ('torch', 'triton'):
    print(f"(24, 768, 3072) one stack, {impl}: graph {graph_ms(lambda: kernels.newton_schulz(st24, backend=impl)):.3f} ms")
X = st24.bfloat16()
A = X @ X.mT
for name, fn in [('X X^T torch bmm', lambda: X @ X.mT), ('X X^T triton', lambda: NS.newton_schulz_gram(X)),
                 ('bA + cAA torch', lambda: -4.775 * A + 2.0315 * A @ A),
                 ('aI + bA + cAA triton', lambda: NS.newton_schulz_gram(A, 2.0315, A, -4.775, 3.4445)),
                 ('aX + BX baddbmm', lambda: torch.baddbmm(X, A, X, beta=3.4445)),
                 ('(aI + B) X bmm', lambda: torch.bmm(A, X))]:
    ms = graph_ms(fn)
    print(f"  {name:18s} {ms * 1e3:7.1f} us", flush=True)
