"""Which GPU kernels one compiled forward+backward of an op runs, Triton against PyTorch, as
kernels/choose.py measures it for a compiled GPT-2 124M (12x1024 tokens): the profiler's kernel
list with GPU us per call. Run from the repo root."""
import os, sys, collections
sys.path.insert(0, os.getcwd())
import torch
from torch.autograd import DeviceType
from kernels.choose import op_cases, _run

B, T, C, H = 12, 1024, 768, 12
for op, (shapes, make, fn) in op_cases(['gelu', 'layer_norm'], B, T, C, H, None, 50304, 3072, False,
                                       torch.bfloat16, 'cuda').items():
    inputs = make()
    for be in ('triton', 'torch'):
        f = torch.compile(fn(be))
        with torch.autocast('cuda', dtype=torch.bfloat16):
            for _ in range(3):
                _run(f, inputs)
            torch.cuda.synchronize()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    _run(f, inputs)
                torch.cuda.synchronize()
        spent = collections.Counter()
        for e in prof.events():
            if e.device_type == DeviceType.CUDA:
                spent[e.name[:100]] += e.device_time_total / 10
        print(f"== {op} {shapes} {be}: {sum(spent.values()):.1f} us per forward+backward")
        for name, us in spent.most_common(12):
            print(f"  {us:8.1f}  {name}")
