# The row kernel alone, old (HEAD before this session: running max per tile, block-wide
# reductions) vs new (running max and sum per warp segment, exp2 by FMA), on 2048 x 50304
# bf16 chunks (three buffers in turn: no L2 reuse between calls), CUDA graph of 10 calls.
import sys, os, statistics, importlib, importlib.util
sys.path.insert(0, os.getcwd())
import torch
from kernels.choose import graph_ms
L = importlib.import_module("kernels.linear_cross_entropy")
# the old file, its custom ops renamed so both can be loaded (Triton reads a kernel's source from its file)
src = open(".devdata/lce_old.py").read().replace('"linear_cross_entropy_fwd"', '"lce_old_fwd"').replace('"linear_cross_entropy_bwd"', '"lce_old_bwd"')
open("/tmp/lce_old_renamed.py", "w").write(src)
spec = importlib.util.spec_from_file_location("lce_old_renamed", "/tmp/lce_old_renamed.py")
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)

C, V = 2048, 50304
torch.manual_seed(0)
bufs = [torch.randn(C, V, device='cuda').bfloat16() for _ in range(3)]
t = torch.randint(0, V, (C,), device='cuda')
loss = torch.empty(C, device='cuda')
it = iter(range(10 ** 9))
common = dict(SOFTCAP=False, LIBDEVICE=True, PRECISE=False)

def run_old(blk, wp):
    old._linear_cross_entropy_fwd_kernel[(C,)](bufs[next(it) % 3], t, loss, V, V, -1, 1.0, 0.0, BLOCK_V=blk, num_warps=wp, **common)

def run_new(blk, seg, wp):
    L._linear_cross_entropy_fwd_kernel[(C,)](bufs[next(it) % 3], t, loss, V, V, -1, 1.0, 0.0, BLOCK_V=blk, SEGMENT=seg,
                                             num_warps=wp, **common)

SWEEP = [(8192, 256, 16), (8192, 256, 32), (8192, 512, 32), (8192, 128, 32), (4096, 128, 32), (4096, 256, 32),
         (8192, 1024, 32), (16384, 512, 32)] if len(sys.argv) < 2 else eval(sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prefetch_kernel import _prefetch_kernel

def run_prefetch(blk, seg, wp):
    _prefetch_kernel[(C,)](bufs[next(it) % 3], t, loss, V, V, -1, 1.0, 0.0, BLOCK_V=blk, SEGMENT=seg, num_warps=wp, **common)

print(torch.cuda.get_device_name(), flush=True)
gb = 3 * C * V * 2 / 1e9
for name, fn in [("old 8192/16w", lambda: run_old(8192, 16))] + \
        [(f"new {b}/{s}/{w}w", (lambda b, s, w: lambda: run_new(b, s, w))(b, s, w))
         for b, s, w in SWEEP] + \
        [(f"prefetch {b}/{s}/{w}w", (lambda b, s, w: lambda: run_prefetch(b, s, w))(b, s, w)) for b, s, w in SWEEP] + [("old 8192/16w again", lambda: run_old(8192, 16))]:
    ms = [graph_ms(fn, calls=10) for _ in range(3)]
    m = statistics.median(ms)
    print(f"{name:20s} {m * 6:.3f} ms per 12288 rows ({gb / m * 1e3:.0f} GB/s counting 2R+1W; {2 / 3 * gb / m * 1e3:.0f} GB/s 1R+1W)  "
          f"[{' '.join(f'{v * 6:.3f}' for v in ms)}]", flush=True)
