"""cuBLASLt's GELU epilogues at GPT-2's MLP shapes (12 x 1024 tokens, 768 -> 3072, bf16), against the product
followed by our GELU kernel (tanh form, which is what cuBLASLt's epilogue computes).
Forward: h = x Wfc^T, g = gelu(h). Backward: dh = (dy Wproj) * gelu'(h).
us per call: median of 5 rounds, each a CUDA graph of 20 calls replayed once, rounds in turn over the variants."""
import statistics, sys
import torch
import torch.nn.functional as F
sys.path.insert(0, ".")
from kernels.gelu import gelu_fwd, gelu_bwd
from kernels.matmul import matmul_plan, _LtPlan, _cublaslt, matmul_ref

torch.manual_seed(0)
M, C, H = 12288, 768, 3072
bf = dict(device="cuda", dtype=torch.bfloat16)
x, dy = torch.randn(M, C, **bf), torch.randn(M, C, **bf)
wfc, wproj = torch.randn(H, C, **bf) * C ** -0.5, torch.randn(C, H, **bf) * H ** -0.5
h, g, dh, dg = (torch.empty(M, H, **bf) for _ in range(4))

plan_fc = matmul_plan(x, wfc.T, h)
plan_dg = matmul_plan(dy, wproj, dg)
fused_fwd = matmul_plan(x, wfc.T, g, epilogue="gelu", aux=h)
plan_fc(x, wfc.T, h)  # h for the backward's aux
fused_bwd = matmul_plan(dy, wproj, dh, epilogue="dgelu", aux=h)
print("plans:", {k: type(p).__name__ + (f" algo {p.chosen} of {len(p.algos)}" if isinstance(p, _LtPlan) else "")
                 for k, p in dict(fc=plan_fc, dg=plan_dg, gelu=fused_fwd, dgelu=fused_bwd).items()})

# accuracy against float64, with PyTorch's unfused path in the same dtype for the three-way rule
rows = torch.arange(0, M, 97, device="cuda")
h64 = x[rows].double() @ wfc.double().T
for form in ("tanh", "none"):
    want = F.gelu(h64, approximate=form)
    fused_fwd(x, wfc.T, g, h)
    e_fused = (g[rows].double() - want).abs().max().item()
    e_torch = (F.gelu(torch.mm(x, wfc.T)[rows], approximate="tanh").double() - want).abs().max().item()
    print(f"forward vs gelu({form}) in f64: fused {e_fused:.3e}  torch mm+gelu_tanh {e_torch:.3e}")
e_aux = (h[rows].double() - h64).abs().max().item()
print(f"aux (pre-activation) vs f64: {e_aux:.3e}")
dg64 = dy[rows].double() @ wproj.double()
want = torch.ops.aten.gelu_backward(dg64, h[rows].double(), approximate="tanh")
fused_bwd(dy, wproj, dh, h)
e_fused = (dh[rows].double() - want).abs().max().item()
ref = torch.ops.aten.gelu_backward(torch.mm(dy, wproj)[rows], h[rows], approximate="tanh")
e_torch = (ref.double() - want).abs().max().item()
print(f"backward dh vs f64: fused {e_fused:.3e}  torch mm+gelu_backward {e_torch:.3e}  (max |want| {want.abs().max().item():.3f})")

variants = {
    "fwd: torch.mm": lambda: torch.mm(x, wfc.T, out=h),
    "fwd: plan": lambda: plan_fc(x, wfc.T, h),
    "fwd: gelu kernel": lambda: gelu_fwd(h, None, "tanh"),
    "fwd: torch.mm + gelu kernel": lambda: gelu_fwd(torch.mm(x, wfc.T, out=h), None, "tanh"),
    "fwd: plan + gelu kernel": lambda: gelu_fwd(plan_fc(x, wfc.T, h), None, "tanh"),
    "fwd: fused (chosen)": lambda: fused_fwd(x, wfc.T, g, h),
    "bwd: torch.mm": lambda: torch.mm(dy, wproj, out=dg),
    "bwd: plan": lambda: plan_dg(dy, wproj, dg),
    "bwd: gelu_bwd kernel": lambda: gelu_bwd(dg, h, None, "tanh"),
    "bwd: torch.mm + gelu_bwd kernel": lambda: gelu_bwd(torch.mm(dy, wproj, out=dg), h, None, "tanh"),
    "bwd: plan + gelu_bwd kernel": lambda: gelu_bwd(plan_dg(dy, wproj, dg), h, None, "tanh"),
    "bwd: fused (chosen)": lambda: fused_bwd(dy, wproj, dh, h),
}
for name, plan, args in (("fwd", fused_fwd, (x, wfc.T, g, h)), ("bwd", fused_bwd, (dy, wproj, dh, h))):
    if isinstance(plan, _LtPlan):
        ref = lambda a, b, out, aux, e=plan.epilogue: matmul_ref(a, b, out, 0.0, e, aux)
        for i in plan.admissible(*args, ref):
            variants[f"{name}: fused algo {i}"] = lambda p=plan, i=i, args=args: p.run(p.algos[i], *args)

graphs = {}
for name, fn in variants.items():
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    gr = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):
        for _ in range(20):
            fn()
    graphs[name] = gr
times = {n: [] for n in graphs}
for _ in range(5):
    for name, gr in graphs.items():
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); gr.replay(); e.record(); torch.cuda.synchronize()
        times[name].append(s.elapsed_time(e) * 1000 / 20)
for name, t in times.items():
    print(f"{name:36s} {statistics.median(t):8.1f} us   (rounds {min(t):.1f}-{max(t):.1f})")
