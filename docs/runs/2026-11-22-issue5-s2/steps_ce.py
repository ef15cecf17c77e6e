# Training step of GPT-2 124M (12x1024, bf16 autocast, fused AdamW) with only the LM head's loss
# swapped (cross_entropy=triton), vs the baseline and kernels='auto'; compiled and eager; profile.
import sys, os, statistics
sys.path.insert(0, os.getcwd())
import torch
from model import GPT, GPTConfig
torch.backends.cuda.matmul.allow_tf32 = True
X = torch.randint(50304, (12, 1024), device='cuda'); Y = torch.randint(50304, (12, 1024), device='cuda')

def build(setting, ce, compile_):
    torch.manual_seed(0)
    model = GPT(GPTConfig(bias=False), kernels=setting, device_type='cuda').cuda()
    if ce:
        model.kernels['cross_entropy'] = ce  # the LM head reads it at forward time
    opt = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), 'cuda')
    m = torch.compile(model) if compile_ else model
    def step():
        with torch.autocast('cuda', dtype=torch.bfloat16):
            _, loss = m(X, Y)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    return step

def ms(step, n=20):
    for _ in range(8): step()
    torch.cuda.synchronize(); ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); step(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)

for compile_ in (True, False):
    for name, setting, ce in (('baseline', 'torch', None), ('only CE triton', 'torch', 'triton'), ('auto', 'auto', None)):
        step = build(setting, ce, compile_)
        torch.cuda.reset_peak_memory_stats()
        t = ms(step)
        print(f"{'compiled' if compile_ else 'eager':8s} {name:15s} {t:.2f} ms/step, peak {torch.cuda.max_memory_allocated() / 2**20:,.0f} MiB", flush=True)
        if compile_ and name != 'auto':
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                for _ in range(3): step()
                torch.cuda.synchronize()
            per = {}
            for e in prof.events():
                if e.device_type == torch.autograd.DeviceType.CUDA:
                    per[e.name[:80]] = per.get(e.name[:80], 0.0) + e.time_range.elapsed_us() / 3 / 1e3
            print(f"  profile sum {sum(per.values()):.2f} ms; top:")
            for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:14]:
                print(f"    {v:7.3f} ms  {k}")
        del step
        torch.cuda.empty_cache()
