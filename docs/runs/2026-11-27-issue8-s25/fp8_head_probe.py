"""The LM head's chunk products in fp8 against the bf16 plans the fused loss runs now (GPT-2: V = 50304, H = 768,
chunks of 2048 and 4096 rows). Forward logits = x W^T: e4m3 x and W (both K-major, as Hopper's fp8 MMA wants);
dx = g W: g in e5m2 (softmax - onehot lies in [-1, 1]), W^T stored K-major (a transposed e4m3 copy). dW = g^T x
would need g transposed (K = rows): left in bf16 here. Also the passes that make the fp8 operands, and each
product's error against float64 on a sample, beside the bf16 product's. us per call: median of 5 rounds in turn,
each a CUDA graph of 10 calls."""
import statistics, sys
import torch
sys.path.insert(0, ".")
from kernels.matmul import matmul

torch.manual_seed(0)
V, H = 50304, 768
dev = "cuda"
W32 = torch.randn(V, H, device=dev) * 0.02
W = W32.bfloat16()
one = torch.ones((), device=dev)


def graphed_us(fns, calls=10):
    graphs = {}
    for name, fn in fns.items():
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        gr = torch.cuda.CUDAGraph()
        with torch.cuda.graph(gr):
            for _ in range(calls):
                fn()
        graphs[name] = gr
    times = {n: [] for n in graphs}
    for _ in range(5):
        for name, gr in graphs.items():
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); gr.replay(); e.record(); torch.cuda.synchronize()
            times[name].append(s.elapsed_time(e) * 1000 / calls)
    return {n: statistics.median(t) for n, t in times.items()}


def q(t, dtype):  # per-tensor scale to the format's largest finite value
    amax = t.abs().amax().float().clamp(min=1e-12)
    s = torch.finfo(dtype).max / amax
    return (t.float() * s).to(dtype), (1 / s).float()


W8, sw = q(W, torch.float8_e4m3fn)
W8T = W8.T.contiguous()  # (H, V): W^T K-major for dx
for M in (2048, 4096):
    x = torch.randn(M, H, device=dev).bfloat16()
    logits = torch.empty(M, V, device=dev, dtype=torch.bfloat16)
    matmul(x, W.T, logits)
    g = torch.softmax(logits.float() * 3, -1)
    g[torch.arange(M), torch.randint(0, V, (M,), device=dev)] -= 1
    g = g.bfloat16()
    dx = torch.empty(M, H, device=dev, dtype=torch.bfloat16)
    x8, sx = q(x, torch.float8_e4m3fn)
    g8 = g.to(torch.float8_e5m2)  # values in [-1, 1]: scale 1
    out = torch.empty_like(logits)
    fns = {
        "logits bf16 plan": lambda: matmul(x, W.T, logits),
        "logits fp8": lambda: torch._scaled_mm(x8, W8.T, sx, sw, out_dtype=torch.bfloat16),
        "logits fp8 fast_accum": lambda: torch._scaled_mm(x8, W8.T, sx, sw, out_dtype=torch.bfloat16, use_fast_accum=True),
        "dx bf16 plan": lambda: matmul(g, W, dx),
        "dx fp8": lambda: torch._scaled_mm(g8, W8T.T, one, sw, out_dtype=torch.bfloat16),
        "dx fp8 fast_accum": lambda: torch._scaled_mm(g8, W8T.T, one, sw, out_dtype=torch.bfloat16, use_fast_accum=True),
        "g -> e5m2 (torch cast)": lambda: g.to(torch.float8_e5m2),
        "x -> e4m3 with amax": lambda: q(x, torch.float8_e4m3fn),
    }
    if M == 2048:
        fns["W -> e4m3, amax, + transposed copy"] = lambda: q(W32, torch.float8_e4m3fn)[0].T.contiguous()
    us = graphed_us(fns)
    rows = torch.arange(0, M, 37, device=dev)
    ref_l = x[rows].double() @ W.double().T
    ref_dx = g[rows].double() @ W.double()
    err = lambda got, ref: ((got.double() - ref).abs().max() / ref.abs().max()).item()
    errs = {
        "logits bf16 plan": err(matmul(x, W.T, logits)[rows], ref_l),
        "logits fp8": err(torch._scaled_mm(x8, W8.T, sx, sw, out_dtype=torch.bfloat16)[rows], ref_l),
        "logits fp8 fast_accum": err(torch._scaled_mm(x8, W8.T, sx, sw, out_dtype=torch.bfloat16, use_fast_accum=True)[rows], ref_l),
        "dx bf16 plan": err(matmul(g, W, dx)[rows], ref_dx),
        "dx fp8": err(torch._scaled_mm(g8, W8T.T, one, sw, out_dtype=torch.bfloat16)[rows], ref_dx),
        "dx fp8 fast_accum": err(torch._scaled_mm(g8, W8T.T, one, sw, out_dtype=torch.bfloat16, use_fast_accum=True)[rows], ref_dx),
    }
    for n, t in us.items():
        e = f"  max err / max |ref| {errs[n]:.2e}" if n in errs else ""
        print(f"M {M:5d}  {n:38s} {t:8.1f} us{e}")
