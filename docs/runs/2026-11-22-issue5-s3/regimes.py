# Fused linear CE (12288 x 768, V = 50304, bf16, fwd+bwd) vs torch.compile and eager, timed
# three ways: (a) bench.py's CUDA graph of 10 calls, replayed back to back (the GPU stays at
# its power limit); (b) triton.testing.do_bench's median (L2 flushed between calls);
# (c) one call at a time after 0.3 s idle (the GPU at full clocks). And floors: the three
# chunked matmuls alone, and three unchunked ones (compile's structure), same three ways.
import sys, os, time, statistics
sys.path.insert(0, os.getcwd())
import torch
import triton
import kernels
from kernels.choose import graph_ms

N, H, V, ROWS = 12288, 768, 50304, 2048
torch.manual_seed(0)
x = torch.randn(N, H, device='cuda', dtype=torch.bfloat16, requires_grad=True)
w = (torch.randn(V, H, device='cuda') * H ** -0.5).bfloat16().requires_grad_()
t = torch.randint(0, V, (N,), device='cuda')
ref = kernels.linear_cross_entropy_ref
compiled = torch.compile(ref, dynamic=False)

def grad_of(f):
    return lambda: torch.autograd.grad(f(x, w, t), [x, w])

buf = torch.empty(ROWS, V, device='cuda', dtype=torch.bfloat16)
dx, dw = torch.empty_like(x), torch.empty(V, H, device='cuda', dtype=torch.float32)
xd, wd = x.detach(), w.detach()

def chunked_matmuls():
    for s in range(0, N, ROWS):
        g = torch.mm(xd[s:s + ROWS], wd.T, out=buf)
        torch.mm(g, wd, out=dx[s:s + ROWS])
        torch.addmm(dw, g.T, xd[s:s + ROWS], beta=int(s > 0), out_dtype=torch.float32, out=dw)

def whole_matmuls():
    z = xd @ wd.T
    return z @ wd, z.T @ xd

def cool_ms(fn, reps=7):
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        fn()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); time.sleep(0.3)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)

print(torch.cuda.get_device_name(), torch.__version__, triton.__version__, flush=True)
cases = [('fused (ours)', grad_of(lambda a, b, c: kernels.linear_cross_entropy(a, b, c, backend='triton'))),
         ('torch.compile', grad_of(compiled)), ('eager', grad_of(ref)),
         ('3 chunked matmuls only', chunked_matmuls), ('3 whole matmuls only', whole_matmuls)]
print(f"{'':24s} {'graph x10 (bench)':>18s} {'do_bench median':>16s} {'one call, cool':>15s}")
for name, fn in cases:
    fn(); torch.cuda.synchronize()
    a = [graph_ms(fn, calls=10) for _ in range(2)]
    b = triton.testing.do_bench(fn, warmup=50, rep=300, return_mode='median')
    c = cool_ms(fn)
    print(f"{name:24s} {' '.join(f'{v:.3f}' for v in a):>18s} {b:16.3f} {c:15.3f}", flush=True)
