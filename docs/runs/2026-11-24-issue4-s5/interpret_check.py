"""CPU-interpreter check (TRITON_INTERPRET=1, from the repo root) that ws_kernels.py, without the
specialization, computes what kernels/attention.py does: T = 200, one tile cut by T."""
import os, sys, math, torch
sys.path.insert(0, "docs/runs/2026-11-24-issue4-s5"); sys.path.insert(0, ".")
import triton
from triton.tools.tensor_descriptor import TensorDescriptor
import ws_kernels as W, kernels.attention as A
torch.manual_seed(0)
B, H, T, D = 2, 2, 200, 64; BM = BN = 64
scale = 1 / math.sqrt(D)
qkv = torch.randn(B, T, 3 * H, D, dtype=torch.bfloat16)
do = torch.randn(B, T, H, D, dtype=torch.bfloat16).transpose(1, 2)
q, k, v = A.split_qkv(qkv, H)
o, lse = A.flash_attention_fwd(q, k, v, True, scale)
dqkv = A.flash_attention_qkv_bwd(do, qkv, o, lse, True, scale)
qkv2 = qkv.view(B * T, 3 * H * D); do2 = do.transpose(1, 2).reshape(B * T, H * D)
o_ws = torch.empty(B, T, H, D, dtype=torch.bfloat16); lse_ws = torch.empty(B, H, T)
d = [TensorDescriptor.from_tensor(qkv2, [b_, D]) for b_ in (BM, BN, BN)]
W.fwd_ws_kernel[(B * H, triton.cdiv(T, BM))](*d, o_ws, lse_ws, T, H, scale, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, WS=False)
print("fwd", (o_ws.float() - o.transpose(1, 2).float()).abs().max().item(), (lse_ws - lse).abs().max().item())
delta = (o.float() * do.float()).sum(-1).contiguous()
dkv = torch.empty(B, T, 2 * H, D, dtype=torch.bfloat16)
W.dkdv_ws_kernel[(B * H, triton.cdiv(T, BN))](TensorDescriptor.from_tensor(qkv2, [BM, D]), d[1], d[2], TensorDescriptor.from_tensor(do2, [BM, D]),
    TensorDescriptor.from_tensor(lse.view(-1), [BM]), TensorDescriptor.from_tensor(delta.view(-1), [BM]), dkv, T, H, scale, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, WS=False)
print("dk", (dkv[:, :, :H].float() - dqkv[:, :, H:2*H].float()).abs().max().item(), "dv", (dkv[:, :, H:].float() - dqkv[:, :, 2*H:].float()).abs().max().item(), "scale", dqkv.float().abs().max().item())
