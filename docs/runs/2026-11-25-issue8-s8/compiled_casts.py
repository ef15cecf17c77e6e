"""
Why did the compiled kernels variants' loss move with cast_per_block (call 3: +0.0384 after 40 steps,
and 3 ms faster)? One forward + backward of a small GPT under bf16 autocast, eager without the
per-block cast as the reference, against eager and torch.compile (aot_eager, inductor) with it:
the loss and each parameter's gradient, max |difference| relative to the gradient's max.
Run: python docs/runs/2026-11-25-issue8-s8/compiled_casts.py [n_layer n_embd]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
import torch  # noqa: E402

from model import GPT, GPTConfig  # noqa: E402

device = 'cuda' if torch.cuda.is_available() else 'cpu'
n_layer, n_embd = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (2, 128)
config = GPTConfig(block_size=128, vocab_size=512, n_layer=n_layer, n_head=4, n_embd=n_embd, bias=False)
idx = torch.randint(512, (4, 128), device=device)


def run(kernels, cast_per_block, backend, autocast_residual):
    torch.manual_seed(0)
    torch._dynamo.reset()  # each model compiled afresh (else the recompile limit sends later ones to eager)
    model = GPT(config, kernels=kernels, device_type=device, cast_per_block=cast_per_block,
                autocast_residual=autocast_residual).to(device)
    stepped = torch.compile(model, backend=backend) if backend else model
    with torch.autocast(device, dtype=torch.bfloat16):
        _, loss = stepped(idx, idx)
    loss.backward()
    return loss.item(), {n: p.grad for n, p in model.named_parameters()}


settings = ['torch'] + (['triton'] if device == 'cuda' or os.environ.get('TRITON_INTERPRET') == '1' else [])
for kernels in settings:
    for autocast_residual in (False, True):
        ref_loss, ref = run(kernels, False, None, autocast_residual)
        for cast_per_block in (False, True):
            for backend in (None, 'aot_eager', 'inductor'):
                loss, grads = run(kernels, cast_per_block, backend, autocast_residual)
                missing = [n for n, g in grads.items() if g is None]
                worst = max((((grads[n] - ref[n]).abs().max() / ref[n].abs().max()).item(), n)
                            for n in ref if grads[n] is not None)
                print(f"{kernels:6s} residual {'bf16' if autocast_residual else 'fp32'} cast_per_block={cast_per_block!s:5} "
                      f"{backend or 'eager':9s} loss {loss:.6f} (ref {ref_loss:.6f}) worst grad rel diff {worst[0]:.2e} "
                      f"({worst[1]}){' MISSING ' + str(missing) if missing else ''}", flush=True)
