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
after_memset = collections.Counter()  # the gap after a memset, by the kernel that follows it
end, last, last_name, busy = None, None, '', 0.0
for e in kernels:
    name = e['name']
    if end is not None:
        gap = max(0.0, e['ts'] - end)
        if gap < 200:  # longer: the host between steps, not the graph
            by_next[kind(name)] += gap
            by_pair[(last, kind(name))] += gap
            if last_name.startswith('Memset'):
                after_memset[name[:60]] += gap
        else:
            big.append(gap)
    count[kind(name)] += 1
    busy += e['dur']
    end = max(end or 0.0, e['ts'] + e['dur'])
    last, last_name = kind(name), name
span = end - kernels[0]['ts']
print(f"{len(kernels) / steps:.0f} kernels per step; span {span / steps / 1e3:.3f} ms per step, busy {busy / steps / 1e3:.3f}, "
      f"gaps under 200 us {sum(by_next.values()) / steps:.1f} us per step, longer gaps {len(big)} ({sum(big) / steps:.1f} us per step)")
for k, v in by_next.most_common():
    print(f"  before {k:9s}: {v / steps:7.1f} us per step over {count[k] / steps:5.0f} kernels ({v / max(1, count[k]):.2f} us each)")
for (a, b), v in by_pair.most_common(8):
    print(f"  {a} -> {b}: {v / steps:7.1f} us per step")
memsets = [e for e in kernels if e['name'].startswith('Memset')]
print(f"  memsets: {len(memsets) / steps:.0f} per step, {sum(e['dur'] for e in memsets) / steps:.1f} us; the gaps after them "
      f"{sum(after_memset.values()) / steps:.1f} us per step, before:")
for name, v in after_memset.most_common(4):
    print(f"    {v / steps:7.1f} us  {name}")
