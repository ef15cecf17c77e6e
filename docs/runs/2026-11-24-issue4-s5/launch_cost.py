"""Host time per launch of the attention forward on a tiny problem (the GPU is never the
bottleneck), by launch path: our eager entry point, the autotuner, the JIT function with
the chosen config, the compiled kernel's own launcher; SDPA and one torch op for scale."""
import os, sys, time, math
import torch
import torch.nn.functional as F
import triton
sys.path.insert(0, os.getcwd())
import kernels.attention as A

B, H, T, D = 1, 2, 128, 64
q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
o = torch.empty(B, T, H, D, device="cuda", dtype=torch.bfloat16)
lse = torch.empty(B, H, T, device="cuda", dtype=torch.float32)
scale = 1 / math.sqrt(D)
args = (q, k, v, o, lse, *A._strides(q, k, v), B, H, T, 1, scale, triton.next_power_of_2(T))

def host_us(fn, n=2000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6

A.flash_attention_fwd(q, k, v, True, scale)
best = A._fwd_tuned.best_config if hasattr(A._fwd_tuned, "best_config") else None
cfg = best.all_kwargs()
print("config", cfg)
grid = (B * H, triton.cdiv(T, cfg["BLOCK_M"]), 1)
jit = A._flash_attention_fwd_kernel
jit[grid](*args, HEAD_DIM=D, CAUSAL=True, **cfg)
compiled = list(jit.device_caches[torch.cuda.current_device()][0].values())[-1]
launch = compiled[grid]
const = dict(HEAD_DIM=D, CAUSAL=True, BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"])
all_args = [*args] + [const[n] for n in jit.arg_names[len(args):]]
stream = torch.cuda.current_stream().cuda_stream
rows = [
    ("flash_attention_fwd (eager entry)", lambda: A.flash_attention_fwd(q, k, v, True, scale)),
    ("autotuner[grid](...)", lambda: A._fwd_tuned[lambda m: grid](*args, HEAD_DIM=D, CAUSAL=True)),
    ("jit[grid](..., config)", lambda: jit[grid](*args, HEAD_DIM=D, CAUSAL=True, **cfg)),
    ("compiled[grid](...)", lambda: launch(*all_args)),
    ("compiled[grid](..., stream)", lambda: launch(*all_args, stream=stream)),
    ("torch SDPA fwd", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    ("torch.add", lambda: torch.add(q, k)),
]
for name, fn in rows:
    print(f"{name:40s} {host_us(fn):7.1f} us host per call", flush=True)
torch.cuda.synchronize()
jit[grid](*args, HEAD_DIM=D, CAUSAL=True, **cfg); ref = o.clone()
o.zero_(); launch(*all_args, stream=stream); torch.cuda.synchronize()
print("compiled launcher output equals the jit's:", torch.equal(o, ref))
