"""Issue 5, seventh session: the loss's row kernel walking its rows and tiles in other orders, so that
more of what it reads is still in L2 (50 MB on the H100).
- Its second pass re-reads the row the first pass just read: 2 programs per SM x 132 SMs hold ~264 rows
  of 100 KB in flight (~26 MB, with the second pass's writes on top), near L2's size. Walking the second
  pass backward re-reads the most recently read tiles first.
- The logits product writes the chunk just before the kernel reads it: the last ~50 MB it wrote may
  still be in L2. Walking the rows (or the first pass's tiles) backward reads those first.
Timed as bench.py times the op (a CUDA graph of 10 calls; kernels.choose.graph_ms), in turn over rounds,
at the op's default chunk (2048 rows) and the model's (4096 rows, 400 MiB); and the logits product plus
the row kernel against the product alone, at 2048 rows, for the row kernel's own share.
Runs on the kernel with row_order.patch applied (the orders as constexprs; not kept).
$ git apply docs/runs/2026-11-26-issue5-s7/row_order.patch && python docs/runs/2026-11-26-issue5-s7/row_order.py [rounds]"""
import os
import sys
sys.path.insert(0, os.getcwd())  # run from the repository root
import importlib
import statistics
import torch
lce = importlib.import_module('kernels.linear_cross_entropy')  # the module (kernels exports a function of its name)
from kernels.choose import graph_ms

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
N, H, V = 12288, 768, 50304
torch.manual_seed(0)
x = (torch.randn(N, H, device='cuda') * 0.5).to(torch.bfloat16).requires_grad_()
w = (torch.randn(V, H, device='cuda') * 0.02).to(torch.bfloat16).requires_grad_()
t = torch.randint(V, (N,), device='cuda')
MiB = 2 ** 20
orders = {'now': (False, False, False), 'pass2 back': (False, False, True), 'pass1 back': (False, True, False),
          'rows back': (True, False, False), 'rows+pass2 back': (True, False, True), 'rows+pass1 back': (True, True, False)}

def op(chunk):
    loss = lce.linear_cross_entropy(x, w, t, chunk_bytes=chunk)
    return loss, *torch.autograd.grad(loss, (x, w))

rows = 2048
logits = torch.empty(rows, V, device='cuda', dtype=torch.bfloat16)
loss_rows = torch.empty(rows, device='cuda')

def product():
    torch.mm(x[:rows].detach(), w.detach().T, out=logits)

def product_and_row_kernel():
    product()
    lce.launch(lce._linear_cross_entropy_fwd_kernel)[(rows,)](
        logits, t[:rows], loss_rows, V, logits.stride(0), -1, 1.0, 0.0, SOFTCAP=False, LIBDEVICE=True, PRECISE=False,
        BLOCK_V=lce.BLOCK_V, SEGMENT=lce.SEGMENT, ROWS_BACKWARD=lce.ORDER[0], PASS1_BACKWARD=lce.ORDER[1],
        PASS2_BACKWARD=lce.ORDER[2], num_warps=lce.NUM_WARPS)

reference = None
for name, order in orders.items():  # the same results, up to the online sum's order
    lce.ORDER = order
    out = [o.detach().float() for o in op(None)]  # detached: a kept graph would pin autograd to this stream
    reference = reference or out
    print(f"{name:>16}: max |diff| loss {abs(out[0] - reference[0]).item():.2e}, dx {(out[1] - reference[1]).abs().max().item():.2e}, "
          f"dW {(out[2] - reference[2]).abs().max().item():.2e}", flush=True)

times = {name: {'2048': [], '4096': [], 'row kernel': []} for name in orders}
for r in range(rounds):
    for name, order in orders.items():
        lce.ORDER = order
        times[name]['2048'].append(graph_ms(lambda: op(None)))
        times[name]['4096'].append(graph_ms(lambda: op(400 * MiB)))
        times[name]['row kernel'].append(graph_ms(product_and_row_kernel) - graph_ms(product))
        print(f"round {r} {name:>16}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in times[name].items()), flush=True)
print(f"\nmedians over {rounds} rounds, ms:\n{'order':>16} {'op, 2048 rows':>14} {'op, 4096 rows':>14} {'row kernel, 2048':>17}")
for name in orders:
    print(f"{name:>16} " + " ".join(f"{statistics.median(v):>{w}.3f}" for v, w in zip(times[name].values(), (14, 14, 17))))
