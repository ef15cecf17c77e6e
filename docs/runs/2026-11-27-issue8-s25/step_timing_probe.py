"""bench.py as it is, with each variant's step also timed back to back: bench times a step between two CUDA events
and waits for the second before the next step (as nanoGPT's bench waits on loss.item() every step), so a step that
the host launches late, as one graph replay or many kernels, shows the GPU idle until the launch. Here, after bench's
own timing, the same number of steps run back to back with an event between each two and one wait at the end
(what train.py's loop does between its logs). Prints both medians; bench's table keeps its own figure.
Usage: python step_timing_probe.py <bench.py's arguments>"""
import statistics, sys
import torch
sys.path.insert(0, ".")
from kernels.choose import time_ms


def both(fn, reps, warmup=3):
    ms = time_ms(fn, reps, warmup)
    if torch.cuda.is_available():
        events = [torch.cuda.Event(enable_timing=True) for _ in range(reps + 1)]
        torch.cuda.synchronize()
        events[0].record()
        for i in range(reps):
            fn()
            events[i + 1].record()
        torch.cuda.synchronize()
        d = [events[i].elapsed_time(events[i + 1]) for i in range(reps)]
        print(f"  [timing probe] waiting each step: median {ms:.3f} ms; back to back: median {statistics.median(d):.3f}, "
              f"mean {sum(d) / reps:.3f} ms", flush=True)
    return ms


source = open("bench.py").read().replace("from kernels.choose import time_ms\n",
                                          "from kernels.choose import time_ms\ntime_ms = __both__\n", 1)
sys.argv = ["bench.py"] + sys.argv[1:]
exec(compile(source, "bench.py", "exec"), {"__name__": "__main__", "__both__": both})
