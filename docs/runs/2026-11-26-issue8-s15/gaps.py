"""
Where a profiled step's GPU sits idle: from bench.py's Chrome trace (bench.py --profile), the gap before
each kernel (its start minus the latest end of the kernels before it), summed per step by what kind of
kernel comes next and what kind ran last. Run: python gaps.py trace.json steps
"""
import collections
import json
import sys


def kind(name):
    if name.startswith(('nvjet', 'void cutlass', 'sm90_', 'void cublas')) or 'gemm' in name or 'splitKreduce' in name:
        return 'cuBLAS'
    if name.startswith('triton_'):
        return 'Inductor'
    if name.startswith('_') and name.endswith('_kernel'):
        return 'ours'
    return 'torch'


trace, steps = json.load(open(sys.argv[1])), int(sys.argv[2])
kernels = sorted((e for e in trace['traceEvents'] if e.get('cat') in ('kernel', 'gpu_memset', 'gpu_memcpy')),
                 key=lambda e: e['ts'])
by_next, by_pair, count, big = collections.Counter(), collections.Counter(), collections.Counter(), []
end, last, busy = None, None, 0.0
for e in kernels:
    name = e['name']
    if end is not None:
        gap = max(0.0, e['ts'] - end)
        if gap < 200:  # longer: the host between steps, not the graph
            by_next[kind(name)] += gap
            by_pair[(last, kind(name))] += gap
        else:
            big.append(gap)
    count[kind(name)] += 1
    busy += e['dur']
    end = max(end or 0.0, e['ts'] + e['dur'])
    last = kind(name)
span = end - kernels[0]['ts']
print(f"{len(kernels) / steps:.0f} kernels per step; span {span / steps / 1e3:.3f} ms per step, busy {busy / steps / 1e3:.3f}, "
      f"gaps under 200 us {sum(by_next.values()) / steps:.1f} us per step, longer gaps {len(big)} ({sum(big) / steps:.1f} us per step)")
for k, v in by_next.most_common():
    print(f"  before {k:9s}: {v / steps:7.1f} us per step over {count[k] / steps:5.0f} kernels ({v / max(1, count[k]):.2f} us each)")
for (a, b), v in by_pair.most_common(8):
    print(f"  {a} -> {b}: {v / steps:7.1f} us per step")
