"""Tilt kernels_cache.json's measurements of the fused loss so that PyTorch's side is the faster on GPU time (Triton's
GPU time set to 1.1x PyTorch's), keeping the measured peaks: the next bench.py run with recompute then shows whether
kernels='auto' still takes the fused loss for memory (kernels.choose.by_memory), as on a machine where the tie in time
breaks PyTorch's way (call 5). A test rig for call 8, not product code."""
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else 'kernels_cache.json'
cache = json.load(open(path))
tilted = 0
for key, r in cache.items():
    if '| cross_entropy ' in key and '| graphed' in key and r.get('torch_gpu_ms'):
        r.update(triton_gpu_ms=1.1 * r['torch_gpu_ms'], impl='torch')
        tilted += 1
        print('tilted:', key[:160], {k: r[k] for k in ('triton_gpu_ms', 'torch_gpu_ms', 'triton_peak_mib', 'torch_peak_mib')})
json.dump(cache, open(path, 'w'), indent=1)
print('entries tilted:', tilted)
