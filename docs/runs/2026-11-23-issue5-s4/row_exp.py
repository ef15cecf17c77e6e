"""Issue 5, session 4: the row kernel now (two passes, tiles of 8192, 32 warps) against one that holds
the whole row in registers (one read), over GPT-2's 6 chunks of 2048 x 50304 (three buffers in turn)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), '../../..')))
import torch
import variants as var
import importlib; lce = importlib.import_module("kernels.linear_cross_entropy")
from kernels.choose import graph_ms
dev = 'cuda'
R, V = 2048, 50304
bufs = [torch.randn(R, V, device=dev).to(torch.bfloat16) * 2 for _ in range(3)]
y = torch.randint(V, (R,), device=dev)
loss = torch.empty(R, device=dev)

def now(b):
    lce._linear_cross_entropy_fwd_kernel[(R,)](b, y, loss, V, b.stride(0), -1, 1.0, 0.0, SOFTCAP=False, LIBDEVICE=True,
        PRECISE=False, BLOCK_V=lce.BLOCK_V, SEGMENT=lce.SEGMENT, num_warps=lce.NUM_WARPS)

def whole(w):
    return lambda b: var.row_whole_kernel[(R,)](b, y, loss, V, b.stride(0), -1, BLOCK=65536, num_warps=w)

ref = bufs[0].clone(); now(ref); l_ref = loss.clone()
for name, f in [('now', now), ('whole 32w', whole(32)), ('whole 16w', whole(16))]:
    b = bufs[0].clone(); f(b); torch.cuda.synchronize()
    err = (b.float() - ref.float()).abs().max().item(), (loss - l_ref).abs().max().item()
    ts = [graph_ms(lambda: [f(b) for b in bufs for _ in range(2)], calls=2) * 1e3 for _ in range(2)]
    print(f"row kernel {name:10s} max diff g {err[0]:.2e} loss {err[1]:.2e}; per 12288 rows: " + " / ".join(f"{t:.0f}" for t in ts) + " us", flush=True)
