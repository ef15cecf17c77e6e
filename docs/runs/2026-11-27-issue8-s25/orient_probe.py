"""GPT-2's MLP products (12 x 1024 tokens, 768 -> 3072, bf16; weight gradients into fp32) in two orientations:
'row' as kernels/gelu_mlp.py has them (h, g, dh row-major (M, H)), 'col' with the hidden layer stored transposed
(hT, gT, dhT row-major (H, M)): the same math, other layouts for cuBLASLt, so other kernels on offer. The question:
does any orientation offer the DGELU product (126 us a layer in the step, an xmma kernel) near the plain product's
80 us? Every algorithm cuBLASLt offers (up to 64 asked) that keeps the three-way rule is timed: us per call, median
of 5 rounds in turn, each a CUDA graph of 20 calls; its workspace and the kernels one call launches are listed.
Then the whole MLP, forward + backward, each orientation with its measured plans, against the model's path."""
import statistics, sys
import torch
sys.path.insert(0, ".")
import kernels.matmul as mm
from kernels.gelu_mlp import gelu_mlp_fwd, gelu_mlp_bwd

torch.manual_seed(0)
M, C, H = 12288, 768, 3072
bf = dict(device="cuda", dtype=torch.bfloat16)
x, dy = torch.randn(M, C, **bf), torch.randn(M, C, **bf)
wfc32, wproj32 = torch.randn(H, C, device="cuda") * C ** -0.5, torch.randn(C, H, device="cuda") * H ** -0.5
wfc, wproj = wfc32.bfloat16(), wproj32.bfloat16()
h, g, dh, hT, gT, dhT = (torch.empty(s, **bf) for s in [(M, H)] * 3 + [(H, M)] * 3)
y, dx = torch.empty(M, C, **bf), torch.empty(M, C, **bf)
dwfc, dwproj = torch.empty(H, C, device="cuda"), torch.empty(C, H, device="cuda")
mm.matmul(x, wfc.T, g, epilogue="gelu", aux=h)      # aux values for the dgelu problems
mm.matmul(wfc, x.T, gT, epilogue="gelu", aux=hT)
mm._chosen.clear()

PRODUCTS = {  # name: (a, b, out, epilogue, aux)
    "row fc+gelu": (x, wfc.T, g, "gelu", h),         "col fc+gelu": (wfc, x.T, gT, "gelu", hT),
    "row proj": (g, wproj.T, y, None, None),         "col proj": (gT.T, wproj.T, y, None, None),
    "row dWproj": (dy.T, g, dwproj, None, None),     "col dWproj": (dy.T, gT.T, dwproj, None, None),
    "row dgelu": (dy, wproj, dh, "dgelu", h),        "col dgelu": (wproj.T, dy.T, dhT, "dgelu", hT),
    "row dWfc": (dh.T, x, dwfc, None, None),         "col dWfc": (dhT, x, dwfc, None, None),
    "row dx": (dh, wfc, dx, None, None),             "col dx": (dhT.T, wfc, dx, None, None),
}


def graphed_us(fns):
    graphs = {}
    for name, fn in fns.items():
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
    return {n: statistics.median(t) for n, t in times.items()}


def kernels_of(fn):
    fn(); torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn(); torch.cuda.synchronize()
    return " + ".join(e.name[:70] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


mm.OFFERED = 64
lib = mm._cublaslt()
for name, (a, b, out, epi, aux) in PRODUCTS.items():
    plan = mm._LtPlan(lib, a, b, out, 0.0, epi, aux)
    ref = lambda a, b, out, aux=None, e=epi: mm.matmul_ref(a, b, out, 0.0, e, aux)
    kept = plan.admissible(a, b, out, aux, ref)
    fns = {"torch": lambda: ref(a, b, out, aux)}
    fns.update({i: (lambda al=plan.algos[i]: plan.run(al, a, b, out, aux)) for i in kept})
    us = graphed_us(fns)
    print(f"== {name}: {len(plan.algos)} offered, {len(kept)} admissible; torch {us.pop('torch'):.1f} us "
          f"[{kernels_of(fns['torch'])}]")
    for i in sorted(us, key=us.get)[:6]:
        print(f"   algo {i:2d}: {us[i]:6.1f} us  ws {plan.algos[i].workspace >> 10} KiB  [{kernels_of(fns[i])}]")


def mlp_row():
    y_, g_, h_ = gelu_mlp_fwd(x, wfc, wproj)
    return gelu_mlp_bwd(dy, x, h_, g_, wfc, wproj, torch.float32)


def mlp_col():
    mm.matmul(wfc, x.T, gT, epilogue="gelu", aux=hT)
    mm.matmul(gT.T, wproj.T, y)
    mm.matmul(dy.T, gT.T, dwproj)
    mm.matmul(wproj.T, dy.T, dhT, epilogue="dgelu", aux=hT)
    mm.matmul(dhT, x, dwfc)
    return mm.matmul(dhT.T, wfc, dx)


for offered in (16, 64):
    mm.OFFERED = offered
    mm._chosen.clear()
    mlp_row(); mlp_col(); torch.cuda.synchronize()
    us = graphed_us({"row (the model's)": mlp_row, "col": mlp_col})
    print(f"whole MLP fwd+bwd, {offered} offered: " + ", ".join(f"{k} {v:.1f} us" for k, v in us.items()))
    for k, fn in (("row", mlp_row), ("col", mlp_col)):
        print(f"   {k}: {kernels_of(fn)}")
