"""The norm backward's weight-gradient partial sums, (2, programs, N) fp32 summed over programs: torch's
sum over the middle dimension (as now) against the same numbers stored (2, N, programs) and summed over the
last, contiguous dimension; eager, and compiled (Inductor's reduction). us per call, CUDA graph of 100 calls."""
import torch

def graph_us(fn, calls=100, rounds=5):
    fn(); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); g.replay(); end.record(); torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / calls)
    return sorted(times)[rounds // 2]

for shape in ((2, 264, 768), (264, 768), (2, 132, 768), (2, 264, 3072)):
    middle = torch.randn(shape, device='cuda')
    last = middle.transpose(-1, -2).contiguous()
    assert torch.allclose(middle.sum(-2), last.sum(-1), rtol=1e-5, atol=1e-5)
    comp_mid, comp_last = torch.compile(lambda t: t.sum(-2)), torch.compile(lambda t: t.sum(-1))
    print(f"{str(shape):16s} sum(-2) {graph_us(lambda: middle.sum(-2)):6.2f} us | transposed sum(-1) "
          f"{graph_us(lambda: last.sum(-1)):6.2f} us | compiled {graph_us(lambda: comp_mid(middle)):6.2f} / "
          f"{graph_us(lambda: comp_last(last)):6.2f} us", flush=True)
