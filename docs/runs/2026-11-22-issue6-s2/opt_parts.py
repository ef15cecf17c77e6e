# Where the Muon step's time goes: GPT-2 124M parameters with random gradients, profiled.
import sys, torch
sys.path.insert(0, '.')
from model import GPT, GPTConfig
torch.manual_seed(0)
model = GPT(GPTConfig(bias=False), kernels='auto', device_type='cuda').cuda()
for p in model.parameters():
    p.grad = torch.randn_like(p)
def timed(opt, n=20):
    for _ in range(3): opt.step()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(n):
        s.record(); opt.step(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[n // 2]
for backend in ('triton', 'torch'):
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda', muon=dict(lr=0.02, momentum=0.95, weight_decay=0.0, embed_lr=6e-4, scalar_lr=6e-4, backend=backend))
    print(f"muon ({backend} NS) step: {timed(opt):.3f} ms")
    for p in model.parameters():
        p.grad = torch.randn_like(p)  # the Nesterov update overwrote them
adamw = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
print(f"adamw step: {timed(adamw):.3f} ms")
from torch.profiler import profile, ProfilerActivity
opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda', muon=dict(lr=0.02, momentum=0.95, weight_decay=0.0, embed_lr=6e-4, scalar_lr=6e-4))
timed(opt, 3)
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for _ in range(5):
        opt.step()
    torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=60))
# the same step as one CUDA graph: GPU time without the launch gaps (a measurement only:
# the tables of gradient addresses are baked into the graph here, fine for fixed gradients)
try:
    side = torch.cuda.Stream(); side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        opt.step()
    class G:
        step = staticmethod(graph.replay)
    print(f"muon (triton NS) step as one CUDA graph: {timed(G):.3f} ms")
except Exception as e:
    print(f"graph capture failed: {type(e).__name__}: {str(e)[:200]}")
