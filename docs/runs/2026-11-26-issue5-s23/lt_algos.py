"""Issue 5, twenty-third session: every cuBLASLt algorithm its heuristic offers for the loss's three chunk products,
at GPT-2's head (12288 x 768, V = 50304, bf16, 2048-row chunks as the op's default), timed against the kernel
PyTorch's call gets. torch.mm / addmm take cuBLAS's (or cuBLASLt's) first choice; nothing in PyTorch on CUDA picks
among the others (TunableOp registers only "Default" there), so this calls cuBLASLt through ctypes.

The products, as column-major cuBLAS problems (PyTorch's row-major tensors read as their transposes):
  logits  (R, V) = x_c W^T : D (V x R) = op_T(W: H x V, ld H) . x_c (H x R, ld H)          bf16 out
  dx      (R, H) = g W     : D (H x R) = W (H x V, ld H) . g (V x R, ld V)                   bf16 out, K = V
  dW      (V, H) += g^T x_c: D (H x V) = x_c (H x R, ld H) . op_T(g: V x R, ld V), C = D     fp32, beta 1
  dW^T    the same sum laid out (H, V) row-major: D (V x H) = g (V x R) . op_T(x_c: H x R)  fp32, beta 1
Each is timed as six chunks' worth in a CUDA graph (kernels.choose.graph_ms), first every algorithm once, then
the best few and PyTorch's own call in turn over rounds; then the forward launcher with each product's best
algorithm against the launcher as it is, in turn over rounds.
$ python docs/runs/2026-11-26-issue5-s23/lt_algos.py [rounds]"""
import ctypes
import os
import statistics
import sys
sys.path.insert(0, os.getcwd())  # run from the repository root
import importlib
import torch
lce = importlib.import_module('kernels.linear_cross_entropy')
from kernels.backend import launch
from kernels.choose import graph_ms

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
N, H, V = 12288, 768, 50304
torch.manual_seed(0)
x = (torch.randn(N, H, device='cuda') * 0.5).to(torch.bfloat16)
w = (torch.randn(V, H, device='cuda') * 0.02).to(torch.bfloat16)
t = torch.randint(V, (N,), device='cuda')
R = lce._chunk_rows(N, V, 2, lce.chunk_bytes_for(V, 2, lce.CHUNK_BYTES, lce.CHUNK_ROWS))
chunks = range(0, N, R)
torch.mm(x[:8], w[:8].T)  # loads cuBLAS and with it cuBLASLt

torch.backends.cuda.preferred_blas_library('cublaslt')
torch.mm(x[:8], w[:8].T)
torch.backends.cuda.preferred_blas_library('cublas')
path = next(line.split()[-1] for line in open('/proc/self/maps') if 'libcublasLt.so' in line)
print(f"cuBLASLt: {path}")
lt = ctypes.CDLL(path)
ver = lt.cublasLtGetVersion
ver.restype = ctypes.c_size_t
print(f"cuBLASLt version {ver()}")

BF16, F32 = 14, 0           # cudaDataType
COMPUTE_32F = 68            # cublasComputeType_t
TRANSA, TRANSB = 3, 4       # cublasLtMatmulDescAttributes_t
MAX_WORKSPACE = 1           # cublasLtMatmulPreferenceAttributes_t
CONFIG = {'algo id': 0, 'tile': 1, 'splitK': 2, 'reduction': 3, 'swizzle': 4, 'custom': 5, 'stages': 6,
          'inner': 7, 'cluster': 8}  # cublasLtMatmulAlgoConfigAttributes_t
WORKSPACE = 64 * 2**20


class Algo(ctypes.Structure):
    _fields_ = [('data', ctypes.c_uint64 * 8)]


class Heuristic(ctypes.Structure):
    _fields_ = [('algo', Algo), ('workspace', ctypes.c_size_t), ('state', ctypes.c_int),
                ('waves', ctypes.c_float), ('reserved', ctypes.c_int * 4)]


def ok(status, what):
    if status != 0:
        raise RuntimeError(f"{what}: cuBLAS status {status}")


handle = ctypes.c_void_p()
ok(lt.cublasLtCreate(ctypes.byref(handle)), 'create')
workspace = torch.empty(WORKSPACE, device='cuda', dtype=torch.uint8)


def layout(dtype, rows, cols, ld):
    lay = ctypes.c_void_p()
    ok(lt.cublasLtMatrixLayoutCreate(ctypes.byref(lay), dtype, ctypes.c_uint64(rows), ctypes.c_uint64(cols),
                                     ctypes.c_int64(ld)), 'layout')
    return lay


class Problem:
    """out = a @ b (+ beta out), PyTorch's row-major tensors given as functions of the chunk's start; a and b may be
    transposed views of contiguous tensors. cuBLAS sees the column-major out^T = op(b^T) op(a^T)."""

    def __init__(self, name, a, b, d, beta, torch_call, starts=(0,)):
        self.name, self.a, self.b, self.d, self.beta, self.torch_call, self.starts = name, a, b, d, beta, torch_call, starts
        A, B, D = a(0), b(0), d(0)
        (M, K), (_, Nn) = A.shape, B.shape
        assert D.is_contiguous() and D.shape == (M, Nn)
        # cuBLAS's A is b^T (Nn x K): b row-major is b^T column-major; a transposed view of a contiguous (Nn, K) is op T
        transa, a_lay = (0, (Nn, K, Nn)) if B.is_contiguous() else (1, (K, Nn, K))
        transb, b_lay = (0, (K, M, K)) if A.is_contiguous() else (1, (M, K, M))
        assert B.is_contiguous() or B.T.is_contiguous()
        assert A.is_contiguous() or A.T.is_contiguous()
        d_type = {torch.bfloat16: BF16, torch.float32: F32}[D.dtype]
        self.desc = ctypes.c_void_p()
        ok(lt.cublasLtMatmulDescCreate(ctypes.byref(self.desc), COMPUTE_32F, F32), 'desc')
        for attr, value in ((TRANSA, transa), (TRANSB, transb)):
            v = ctypes.c_int32(value)
            ok(lt.cublasLtMatmulDescSetAttribute(self.desc, attr, ctypes.byref(v), 4), 'desc attr')
        self.lays = (layout(BF16, *a_lay), layout(BF16, *b_lay), layout(d_type, Nn, M, Nn))
        pref = ctypes.c_void_p()
        ok(lt.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), 'pref')
        ws = ctypes.c_uint64(WORKSPACE)
        ok(lt.cublasLtMatmulPreferenceSetAttribute(pref, MAX_WORKSPACE, ctypes.byref(ws), 8), 'pref attr')
        results, count = (Heuristic * 64)(), ctypes.c_int()
        ok(lt.cublasLtMatmulAlgoGetHeuristic(handle, self.desc, self.lays[0], self.lays[1], self.lays[2],
                                             self.lays[2], pref, 64, results, ctypes.byref(count)), 'heuristic')
        self.algos = [results[i] for i in range(count.value) if results[i].state == 0]
        self.flops = 2 * M * K * Nn * len(starts)

    def call(self, algo, start):
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(self.beta(start))
        d = self.d(start)
        ok(lt.cublasLtMatmul(handle, self.desc, ctypes.byref(alpha), ctypes.c_void_p(self.b(start).data_ptr()),
                             self.lays[0], ctypes.c_void_p(self.a(start).data_ptr()), self.lays[1],
                             ctypes.byref(beta), ctypes.c_void_p(d.data_ptr()), self.lays[2],
                             ctypes.c_void_p(d.data_ptr()), self.lays[2], ctypes.byref(algo.algo),
                             ctypes.c_void_p(workspace.data_ptr()), ctypes.c_size_t(WORKSPACE),
                             ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)), 'matmul')

    def all(self, algo):
        return lambda: [self.call(algo, s) for s in self.starts]

    def all_torch(self):
        return lambda: [self.torch_call(s) for s in self.starts]


def config(algo):
    """The algorithm's configuration as cuBLASLt reports it (each attribute read at its own size)."""
    out = []
    for name, attr in CONFIG.items():
        size, v = ctypes.c_size_t(), ctypes.c_uint64(0)
        get = lambda n: lt.cublasLtMatmulAlgoConfigGetAttribute(ctypes.byref(algo.algo), attr, ctypes.byref(v), n,
                                                                ctypes.byref(size))
        if get(0) == 0 and 0 < size.value <= 8 and get(size.value) == 0:
            out.append(f"{name} {v.value}")
    return ', '.join(out) + f", workspace {algo.workspace >> 20} MiB, waves {algo.waves:.2f}"


g = (torch.randn(R, V, device='cuda') * 1e-4).to(torch.bfloat16)  # a gradient's size of values
logits = torch.empty(R, V, device='cuda', dtype=torch.bfloat16)
dx = torch.empty_like(x)
dw = torch.zeros(V, H, device='cuda', dtype=torch.float32)
dwt = torch.zeros(H, V, device='cuda', dtype=torch.float32)
xc = lambda s: x[s:s + R]
src = {'g': g}  # where the dx and dW problems read the chunk's gradient
gc = lambda s: src['g']
zero = lambda s: 0.0
problems = [
    Problem('logits', xc, lambda s: w.T, lambda s: logits, zero, lambda s: torch.mm(xc(s), w.T, out=logits), chunks),
    Problem('dx', gc, lambda s: w, lambda s: dx[s:s + R], zero, lambda s: torch.mm(g, w, out=dx[s:s + R]), chunks),
    Problem('dW', lambda s: gc(s).T, xc, lambda s: dw, lambda s: float(s > 0),
            lambda s: torch.addmm(dw, g.T, xc(s), beta=int(s > 0), out_dtype=torch.float32, out=dw), chunks),
    Problem('dW^T', lambda s: xc(s).T, gc, lambda s: dwt, lambda s: float(s > 0),
            lambda s: torch.addmm(dwt, xc(s).T, g, beta=int(s > 0), out_dtype=torch.float32, out=dwt), chunks),
]
# GPT-2's block products at 12 x 1024 tokens (issue 8): forward x W^T, the input's gradient dy W, the weight's dy^T x
T = 12288
for name, n_in, n_out in (('qkv', 768, 2304), ('attn proj', 768, 768), ('fc', 768, 3072), ('mlp proj', 3072, 768)):
    xin = torch.randn(T, n_in, device='cuda').to(torch.bfloat16)
    wt = (torch.randn(n_out, n_in, device='cuda') * 0.02).to(torch.bfloat16)
    dy = (torch.randn(T, n_out, device='cuda') * 0.01).to(torch.bfloat16)
    y, dxin, dwt_ = (torch.empty(T, n_out, device='cuda', dtype=torch.bfloat16),
                     torch.empty(T, n_in, device='cuda', dtype=torch.bfloat16),
                     torch.empty(n_out, n_in, device='cuda', dtype=torch.bfloat16))
    problems += [
        Problem(f'{name} fwd', lambda s, xin=xin: xin, lambda s, wt=wt: wt.T, lambda s, y=y: y, zero,
                lambda s, xin=xin, wt=wt, y=y: torch.mm(xin, wt.T, out=y)),
        Problem(f'{name} dgrad', lambda s, dy=dy: dy, lambda s, wt=wt: wt, lambda s, o=dxin: o, zero,
                lambda s, dy=dy, wt=wt, o=dxin: torch.mm(dy, wt, out=o)),
        Problem(f'{name} wgrad', lambda s, dy=dy: dy.T, lambda s, xin=xin: xin, lambda s, o=dwt_: o, zero,
                lambda s, dy=dy, xin=xin, o=dwt_: torch.mm(dy.T, xin, out=o)),
    ]

best, best_ms, gain = {}, {}, {}


def search(p):
    print(f"\n== {p.name}: {len(p.algos)} algorithms offered; us per op (the loss: six chunks)")
    # every algorithm gives PyTorch's result (within fp32 rounding of another summation order)
    p.all_torch()()
    want = p.d(0).float().clone()
    usable = []
    for i, a in enumerate(p.algos):
        try:
            p.all(a)()
            torch.cuda.synchronize()
        except RuntimeError as e:
            print(f"  [{i:2d}] failed: {e}")
            continue
        err = (p.d(0).float() - want).abs().max().item()
        if err > 1e-2 * want.abs().max().item():
            print(f"  [{i:2d}] wrong result: max |diff| {err:.2e}")
            continue
        usable.append(i)
    first = {i: graph_ms(p.all(p.algos[i])) for i in usable}
    torch_first = graph_ms(p.all_torch())
    print(f"  PyTorch's call: {torch_first * 1e3:7.0f}")
    for i in sorted(first, key=first.get):
        print(f"  [{i:2d}] {first[i] * 1e3:7.0f} ({p.flops / first[i] / 1e9:4.0f} TFLOP/s)  {config(p.algos[i])}")
    top = sorted(first, key=first.get)[:4]
    times = {k: [] for k in ['torch'] + top}
    for r in range(rounds):
        times['torch'].append(graph_ms(p.all_torch()))
        for i in top:
            times[i].append(graph_ms(p.all(p.algos[i])))
    print(f"  in turn, {rounds} rounds, medians: " + "  ".join(
        f"{k if k == 'torch' else f'[{k}]'} {statistics.median(v) * 1e3:.0f}" for k, v in times.items()))
    best[p.name] = min(top, key=lambda i: statistics.median(times[i]))
    best_ms[p.name] = statistics.median(times[best[p.name]])
    delta = [a - b for a, b in zip(times[best[p.name]], times['torch'])]
    gain[p.name] = statistics.median(delta) * 1e3
    print(f"  best [{best[p.name]}] against PyTorch's call, median of the rounds' differences: {gain[p.name]:+.0f} us per op",
          flush=True)


for p in problems[:4]:
    search(p)


# the forward launcher with each product's best algorithm, against it as it is
by_name = {p.name: p for p in problems}
loss_rows = torch.empty(N, device='cuda', dtype=torch.float32)


def forward(use_lt, dw_name='dW'):
    """The launcher's loop (logits, row kernel, dx, dW += in fp32) through PyTorch's calls or the best algorithms."""
    src['g'] = logits  # the products read the chunk's gradient where the row kernel leaves it
    for start in chunks:
        if use_lt:
            by_name['logits'].call(by_name['logits'].algos[best['logits']], start)
        else:
            torch.mm(xc(start), w.T, out=logits)
        launch(lce._linear_cross_entropy_fwd_kernel)[(R,)](
            logits, t[start:start + R], loss_rows[start:start + R], V, logits.stride(0), -1, 1.0, 0.0,
            SOFTCAP=False, LIBDEVICE=True, PRECISE=False, BLOCK_V=lce.BLOCK_V, SEGMENT=lce.SEGMENT,
            num_warps=lce.NUM_WARPS)
        if use_lt:
            by_name['dx'].call(by_name['dx'].algos[best['dx']], start)
            by_name[dw_name].call(by_name[dw_name].algos[best[dw_name]], start)
        else:
            torch.mm(logits, w, out=dx[start:start + R])
            torch.addmm(dw, logits.T, xc(start), beta=int(start > 0), out_dtype=torch.float32, out=dw)


dw_name = min(('dW', 'dW^T'), key=lambda n: best_ms[n])
forward(False)
ref = (loss_rows.clone(), dx.clone(), dw.clone())
forward(True, dw_name)
got = (loss_rows.clone(), dx.clone(), dw.clone() if dw_name == 'dW' else dwt.T.clone())
torch.cuda.synchronize()
print(f"\nlauncher with the best algorithms (dW as {dw_name}): max |diff| loss rows "
      f"{(got[0] - ref[0]).abs().max().item():.2e}, dx {(got[1].float() - ref[1].float()).abs().max().item():.2e}, "
      f"dW {(got[2] - ref[2]).abs().max().item():.2e} (max |dW| {ref[2].abs().max().item():.2e})")
times = {'now': [], 'lt': []}
for r in range(max(rounds, 5)):
    times['now'].append(graph_ms(lambda: forward(False)))
    times['lt'].append(graph_ms(lambda: forward(True, dw_name)))
    print(f"round {r}: now {times['now'][-1]:.3f}  lt {times['lt'][-1]:.3f} ms", flush=True)
print(f"medians: now {statistics.median(times['now']):.3f}  lt {statistics.median(times['lt']):.3f}; "
      f"lt - now, median of the rounds' differences "
      f"{statistics.median(a - b for a, b in zip(times['lt'], times['now'])):+.3f} ms")

for p in problems[4:]:
    search(p)
model = sum(gain[p.name] for p in problems[4:])
print(f"\nGPT-2's block products: the best algorithms against PyTorch's calls, {model:+.0f} us per layer, "
      f"{12 * model / 1e3:+.2f} ms per step (12 layers)")

# the kernels behind PyTorch's call and the best algorithm
from torch.profiler import profile, ProfilerActivity
for p in problems:
    for label, fn in (('PyTorch', p.all_torch()), (f'[{best[p.name]}]', p.all(p.algos[best[p.name]]))):
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = [f"{e.count} x {e.key[:100]}" for e in prof.key_averages() if e.device_time_total > 0]
        print(f"{p.name:>6} {label:>8}: " + '; '.join(names))

