"""Issue 5, twenty-second session: the chunk loop's cuBLAS products, arranged differently, at GPT-2's head
(12288 x 768, V = 50304, bf16, 2048-row chunks as the op's default). The forward launcher alone (where all three
products and the row kernel run), timed as bench.py times an op (a CUDA graph of 10 calls, replayed), in turn over
rounds:
  now       : the launcher as it is (logits product, row kernel, dx = g W, then dW += g^T x in fp32)
  dw_first  : dW's product before dx's
  side_dx   : dx's product on a second stream beside dW's (dx's 2048 x 768 output fills few SMs on its own)
  dw_t      : dW kept transposed, dW^T += x^T g (the same bytes; cuBLAS sees the other layout and may pick another kernel)
  lt        : every product through cuBLASLt (torch.backends.cuda.preferred_blas_library)
Then each product alone (six chunks' worth), and a profile of one call of 'now' and of the best other, kernel by kernel.
$ python docs/runs/2026-11-26-issue5-s22/products.py [rounds]"""
import os
import sys
import statistics
sys.path.insert(0, os.getcwd())  # run from the repository root
import importlib
import torch
lce = importlib.import_module('kernels.linear_cross_entropy')  # the module (kernels exports a function of its name)
from kernels.backend import launch
from kernels.choose import graph_ms

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N, H, V = 12288, 768, 50304
torch.manual_seed(0)
x = (torch.randn(N, H, device='cuda') * 0.5).to(torch.bfloat16)
w = (torch.randn(V, H, device='cuda') * 0.02).to(torch.bfloat16)
t = torch.randint(V, (N,), device='cuda')
ROWS = lce._chunk_rows(N, V, 2, lce.chunk_bytes_for(V, 2, lce.CHUNK_BYTES, lce.CHUNK_ROWS))
side = torch.cuda.Stream()

def forward(variant):
    """The launcher's loop, arranged as `variant` says: (loss rows, dx, dW as (V, H) fp32)."""
    loss_rows = torch.empty(N, device='cuda', dtype=torch.float32)
    dx = torch.empty_like(x)
    dw = torch.empty((H, V) if variant == 'dw_t' else (V, H), device='cuda', dtype=torch.float32)
    logits = torch.empty(ROWS, V, device='cuda', dtype=x.dtype)
    for start in range(0, N, ROWS):
        xc = x[start:start + ROWS]
        g = torch.mm(xc, w.T, out=logits[:xc.shape[0]])
        launch(lce._linear_cross_entropy_fwd_kernel)[(g.shape[0],)](
            g, t[start:start + ROWS], loss_rows[start:start + ROWS], V, g.stride(0), -1, 1.0, 0.0,
            SOFTCAP=False, LIBDEVICE=True, PRECISE=False, BLOCK_V=lce.BLOCK_V, SEGMENT=lce.SEGMENT,
            num_warps=lce.NUM_WARPS)
        beta = int(start > 0)
        dx_product = lambda: torch.mm(g, w, out=dx[start:start + ROWS])
        if variant == 'dw_t':
            dw_product = lambda: torch.addmm(dw, xc.T, g, beta=beta, out_dtype=torch.float32, out=dw)
        else:
            dw_product = lambda: torch.addmm(dw, g.T, xc, beta=beta, out_dtype=torch.float32, out=dw)
        if variant == 'side_dx':
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                dx_product()
            dw_product()
            torch.cuda.current_stream().wait_stream(side)  # the next chunk's logits overwrite g
        elif variant == 'dw_first':
            dw_product()
            dx_product()
        else:
            dx_product()
            dw_product()
    return loss_rows, dx, (dw.T if variant == 'dw_t' else dw)

VARIANTS = ['now', 'dw_first', 'side_dx', 'dw_t', 'lt']

def timed(variant, fn):
    if variant == 'lt':
        torch.backends.cuda.preferred_blas_library('cublaslt')
    try:
        return graph_ms(fn)
    finally:
        torch.backends.cuda.preferred_blas_library('cublas')

# the arrangements compute the same thing (fp32 sums in another order at most)
ref = forward('now')
for v in VARIANTS[1:]:
    if v == 'lt':
        torch.backends.cuda.preferred_blas_library('cublaslt')
    got = forward(v if v != 'lt' else 'now')
    torch.backends.cuda.preferred_blas_library('cublas')
    torch.cuda.synchronize()
    print(f"{v:>9}: max |diff| loss rows {(got[0] - ref[0]).abs().max().item():.2e}, dx "
          f"{(got[1].float() - ref[1].float()).abs().max().item():.2e}, dW {(got[2] - ref[2]).abs().max().item():.2e} "
          f"(dW's max |value| {ref[2].abs().max().item():.2e})")

print(f"\nthe forward launcher, ms per call ({N} x {H}, V = {V}, {ROWS}-row chunks), rounds in turn")
times = {v: [] for v in VARIANTS}
for r in range(rounds):
    for v in VARIANTS:
        times[v].append(timed(v, lambda: forward(v if v != 'lt' else 'now')))
    print(f"round {r}: " + "  ".join(f"{v} {times[v][-1]:.3f}" for v in VARIANTS), flush=True)
print("medians: " + "  ".join(f"{v} {statistics.median(times[v]):.3f}" for v in VARIANTS))
print("vs now:  " + "  ".join(f"{v} {statistics.median(a - b for a, b in zip(times[v], times['now'])):+.3f}"
                              for v in VARIANTS[1:]))

# each product alone, six chunks' worth, on a gradient-like g (softmax-sized values) and the real x chunks
g = (torch.randn(ROWS, V, device='cuda') * 1e-4).to(torch.bfloat16)
dx = torch.empty_like(x)
dw = torch.empty(V, H, device='cuda', dtype=torch.float32)
dwt = torch.empty(H, V, device='cuda', dtype=torch.float32)
dwb = torch.empty(V, H, device='cuda', dtype=torch.bfloat16)
chunks = range(0, N, ROWS)
products = {
    'logits  x W^T      ': lambda: [torch.mm(x[s:s + ROWS], w.T, out=g) for s in chunks],
    'dx      g W        ': lambda: [torch.mm(g, w, out=dx[s:s + ROWS]) for s in chunks],
    'dW      += g^T x   ': lambda: [torch.addmm(dw, g.T, x[s:s + ROWS], beta=int(s > 0), out_dtype=torch.float32, out=dw)
                                    for s in chunks],
    'dW^T    += x^T g   ': lambda: [torch.addmm(dwt, x[s:s + ROWS].T, g, beta=int(s > 0), out_dtype=torch.float32, out=dwt)
                                    for s in chunks],
    'dW      beta 0 fp32': lambda: [torch.addmm(dw, g.T, x[s:s + ROWS], beta=0, out_dtype=torch.float32, out=dw)
                                    for s in chunks],
    'dW      bf16 out   ': lambda: [torch.mm(g.T, x[s:s + ROWS], out=dwb) for s in chunks],
}
print(f"\neach product over the six chunks, us per op (median of {rounds} rounds), cuBLAS | cuBLASLt")
flops = 2 * N * H * V
for name, fn in products.items():
    ms = [[timed(lib, fn) for lib in ('now', 'lt')] for _ in range(rounds)]
    plain, lt = statistics.median(m[0] for m in ms), statistics.median(m[1] for m in ms)
    print(f"  {name} {plain * 1e3:7.0f} ({flops / plain / 1e9:4.0f} TFLOP/s) | {lt * 1e3:7.0f} ({flops / lt / 1e9:4.0f} TFLOP/s)")

# the kernels each arrangement launches
from torch.profiler import profile, ProfilerActivity
for v in ('now', 'side_dx', 'dw_t', 'lt'):
    if v == 'lt':
        torch.backends.cuda.preferred_blas_library('cublaslt')
    for _ in range(3):
        forward(v if v != 'lt' else 'now')
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            forward(v if v != 'lt' else 'now')
        torch.cuda.synchronize()
    torch.backends.cuda.preferred_blas_library('cublas')
    print(f"\n== {v}: kernels, us per forward (5 calls)")
    for e in sorted(prof.key_averages(), key=lambda e: -e.device_time_total)[:8]:
        print(f"  {e.device_time_total / 5:8.0f} us  {e.count // 5:3d} x  {e.key[:110]}")
