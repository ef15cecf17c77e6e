# Issue 6, session 5: the timing the experiment scripts here share: fn's calls replayed from a CUDA
# graph of `calls` calls (after 3 eager ones on a side stream), median us per call over `reps` replays.
import torch


def graph_us(fn, calls=10, reps=15):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls): fn()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1e3 / calls)
    return sorted(ts)[reps // 2]
