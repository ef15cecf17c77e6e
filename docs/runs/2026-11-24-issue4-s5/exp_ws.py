"""Time ws_kernels.py (warp-specialized, causal) against kernels/attention.py and SDPA on
the GPU, and check them against ours. Run from the repo root, one phase and shape per process
(a hung warp-specialized kernel then costs one timeout, not the call):
  python -u docs/runs/2026-11-24-issue4-s5/exp_ws.py {ours|wsfwd|wsdkdv} B H T D"""
import os, sys, math
import torch
import torch.nn.functional as F
import triton
from triton.tools.tensor_descriptor import TensorDescriptor
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
import ws_kernels as W
import kernels.attention as A

def bench(fn):
    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median") * 1e3  # us

def kernel_times(fn, n=10):
    from torch.profiler import profile, ProfilerActivity
    fn(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    out = {}
    for e in prof.key_averages():
        if e.device_type.name == "CUDA" and e.count >= n:
            out[e.key[:40]] = e.device_time_total / e.count if hasattr(e, "device_time_total") else e.cuda_time_total / e.count
    return out

torch.manual_seed(0)
phase = sys.argv[1]
for (B, H, T, D) in [tuple(int(a) for a in sys.argv[2:6])]:
    flop_fwd = 4 * B * H * T * T * D / 2
    scale = 1 / math.sqrt(D)
    qkv = torch.randn(B, T, 3 * H, D, device="cuda", dtype=torch.bfloat16)
    do = torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    q, k, v = A.split_qkv(qkv, H)
    print(f"== {phase} {B}x{H}x{T}x{D} causal", flush=True)
    o, lse = A.flash_attention_fwd(q, k, v, True, scale)
    dqkv = A.flash_attention_qkv_bwd(do, qkv, o, lse, True, scale)
    torch.cuda.synchronize()
    if phase == "ours":
        t_fwd = bench(lambda: A.flash_attention_fwd(q, k, v, True, scale))
        t_bwd = bench(lambda: A.flash_attention_qkv_bwd(do, qkv, o, lse, True, scale))
        print(f"ours fwd {t_fwd:.1f} us ({flop_fwd / t_fwd / 1e6:.0f} TFLOP/s)  bwd {t_bwd:.1f} us ({2.5 * flop_fwd / t_bwd / 1e6:.0f})")
        print("ours bwd kernels (us):", {k_: round(v_, 1) for k_, v_ in kernel_times(lambda: A.flash_attention_qkv_bwd(do, qkv, o, lse, True, scale)).items()})
        qs, ks, vs = (t.detach().clone().requires_grad_() for t in (q, k, v))
        t_sf = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
        of = F.scaled_dot_product_attention(qs, ks, vs, is_causal=True)
        t_sfb = bench(lambda: torch.autograd.grad(F.scaled_dot_product_attention(qs, ks, vs, is_causal=True), (qs, ks, vs), do))
        print(f"sdpa fwd {t_sf:.1f} us  fwd+bwd {t_sfb:.1f} us  (bwd ~{t_sfb - t_sf:.1f})")

    qkv2 = qkv.view(B * T, 3 * H * D)
    do2 = do.transpose(1, 2).reshape(B * T, H * D)
    if phase == "ours":
        continue
    o_ws = torch.empty(B, T, H, D, device="cuda", dtype=torch.bfloat16)
    lse_ws = torch.empty(B, H, T, device="cuda", dtype=torch.float32)
    o_ref = o.transpose(1, 2)
    t_fwd = bench(lambda: A.flash_attention_fwd(q, k, v, True, scale))
    for BM, BN, st in [(128, 128, 2), (128, 64, 3), (128, 128, 3), (128, 64, 2)] if phase == "wsfwd" else []:
        dq_, dk_, dv_ = (TensorDescriptor.from_tensor(qkv2, [b_, D]) for b_ in (BM, BN, BN))
        grid = (B * H, triton.cdiv(T, BM))
        run = lambda: W.fwd_ws_kernel[grid](dq_, dk_, dv_, o_ws, lse_ws, T, H, scale, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN,
                                            WS=True, num_warps=4, num_stages=st)
        try:
            run(); torch.cuda.synchronize()
            err = (o_ws.float() - o_ref.float()).abs().max().item()
            lerr = (lse_ws - lse).abs().max().item()
            t = bench(run)
            print(f"ws fwd {BM}x{BN} st{st}: {t:.1f} us ({flop_fwd / t / 1e6:.0f} TFLOP/s) vs ours {t_fwd / t:.2f}x  max|o-ours| {err:.2e} lse {lerr:.2e}", flush=True)
        except Exception as e:
            print(f"ws fwd {BM}x{BN} st{st}: FAILED {type(e).__name__} {str(e)[:200]}", flush=True)

    if phase != "wsdkdv":
        continue
    t_bwd = bench(lambda: A.flash_attention_qkv_bwd(do, qkv, o, lse, True, scale))
    print("ours bwd kernels (us):", {k_: round(v_, 1) for k_, v_ in kernel_times(lambda: A.flash_attention_qkv_bwd(do, qkv, o, lse, True, scale)).items()}, flush=True)
    delta = (o.float() * do.float()).sum(-1).contiguous()  # (B, H, T)
    dkv_ws = torch.empty(B, T, 2 * H, D, device="cuda", dtype=torch.bfloat16)
    ref_dk, ref_dv = dqkv[:, :, H:2 * H], dqkv[:, :, 2 * H:]
    for BM, BN, st in [(64, 128, 2), (64, 128, 3), (128, 128, 2), (64, 64, 2)]:
        dq_, ddo_ = TensorDescriptor.from_tensor(qkv2, [BM, D]), TensorDescriptor.from_tensor(do2, [BM, D])
        dk_, dv_ = TensorDescriptor.from_tensor(qkv2, [BN, D]), TensorDescriptor.from_tensor(qkv2, [BN, D])
        dl_, dd_ = TensorDescriptor.from_tensor(lse.view(-1), [BM]), TensorDescriptor.from_tensor(delta.view(-1), [BM])
        grid = (B * H, triton.cdiv(T, BN))
        run = lambda: W.dkdv_ws_kernel[grid](dq_, dk_, dv_, ddo_, dl_, dd_, dkv_ws, T, H, scale, HEAD_DIM=D, BLOCK_M=BM,
                                             BLOCK_N=BN, WS=True, num_warps=4, num_stages=st)
        try:
            run(); torch.cuda.synchronize()
            e1 = (dkv_ws[:, :, :H].float() - ref_dk.float()).abs().max().item()
            e2 = (dkv_ws[:, :, H:].float() - ref_dv.float()).abs().max().item()
            t = bench(run)
            print(f"ws dkdv {BM}x{BN} st{st}: {t:.1f} us ({2 * flop_fwd / t / 1e6:.0f} TFLOP/s)  max|dk-ours| {e1:.2e} |dv-ours| {e2:.2e}", flush=True)
        except Exception as e:
            print(f"ws dkdv {BM}x{BN} st{st}: FAILED {type(e).__name__} {str(e)[:200]}", flush=True)
