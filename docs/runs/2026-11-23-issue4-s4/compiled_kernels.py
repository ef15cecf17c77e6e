"""What torch.compile launches for the model's attention call (packed qkv in, its gradient out),
Triton kernels and PyTorch's SDPA path, GPT-2's shape: GPU time per kernel per call (profiler).
A copy of the 57 MB gradient would show as an extra elementwise kernel."""
import os, sys, collections
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), '../../..')))
import torch
import kernels

B, H, T, D = 12, 12, 1024, 64
qkv = torch.randn(B, T, 3 * H, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
do = torch.randn(B, H, T, D, device='cuda', dtype=torch.bfloat16)
for be in ('triton', 'torch'):
    torch._dynamo.reset()
    f = torch.compile(lambda t: kernels.flash_attention_qkv(t, H, backend=be), fullgraph=True)
    def step():
        qkv.grad = None
        f(qkv).backward(do)
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            step()
        torch.cuda.synchronize()
    spent = collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            spent[e.name[:90]] += e.device_time_total / 10
    print(f"compiled, backend={be}: {sum(spent.values()):.1f} us per call")
    for name, us in spent.most_common():
        print(f"  {us:8.1f}  {name}")
