"""
bench.py --memory: where a training step's peak memory sits. One step runs with the CUDA caching
allocator's history recorded (torch.cuda.memory._record_memory_history); the tensors live at the
step's peak are grouped by the line that allocated them, the innermost frame in this repository or
in Inductor's generated code. What it is for: seeing what a recompute setting or the loss's chunk
would have to free to move the peak (docs/perf-notes.md, where the steps' peaks sit).
"""
import os
import re
import collections
import linecache

import torch

ROOT = os.path.dirname(os.path.abspath(__file__))
MiB = 2 ** 20

def record_step(step):
    """The allocator's events of the current CUDA device over one call of step()."""
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(max_entries=2_000_000, stacks='python')
    try:
        step()
        torch.cuda.synchronize()
        snapshot = torch.cuda.memory._snapshot()
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    return snapshot['device_traces'][torch.cuda.current_device()]

def where(event):
    """Where an allocation was made: the innermost frame in this repository (file and line), or in
    Inductor's generated code, by the statement without the buffer's name, so that the layers' buffers
    of one kind (each made on a line of its own) come together."""
    for frame in event.get('frames', []):
        name = frame['filename']
        source = linecache.getline(name, frame['line']).strip()
        if name.startswith(ROOT + os.sep) and os.path.basename(name) != 'bench_memory.py':
            return f"{os.path.relpath(name, ROOT)}:{frame['line']} {source[:100]}"
        if 'torchinductor' in name:
            return f"Inductor's {os.path.basename(name)}: {re.sub(r'^buf[0-9]+ = ', '', source)[:100]}"
    return 'elsewhere: ' + ' < '.join(f"{os.path.basename(f['filename'])}:{f['line']}" for f in event.get('frames', [])[:3])

def live_at_peak(events):
    """(bytes the step itself had allocated at its peak, the event that reached it, the allocations live
    then). Blocks allocated before the recording are not in it: their frees are skipped."""
    live, now, peak, at = {}, 0, 0, None
    for i, e in enumerate(events):
        if e['action'] == 'alloc':
            live[e['addr']] = e
            now += e['size']
        elif e['action'] == 'free_completed' and e['addr'] in live:
            now -= live.pop(e['addr'])['size']
        if now > peak:
            peak, at = now, i
    live = {}
    for e in events[:0 if at is None else at + 1]:  # the same walk again, up to the peak
        if e['action'] == 'alloc':
            live[e['addr']] = e
        elif e['action'] == 'free_completed':
            live.pop(e['addr'], None)
    return peak, at, list(live.values())

def report(title, events, before, peak_allocated, most=30):
    """The text of the breakdown: the step's peak, what was allocated before it, and the allocations live at
    the peak grouped by where() made them, largest first."""
    own, at, live = live_at_peak(events)
    groups = collections.defaultdict(lambda: [0, 0])
    for e in live:
        group = groups[where(e)]
        group[0] += e['size']
        group[1] += 1
    lines = [f"{title}: peak {peak_allocated / MiB:,.0f} MiB allocated; {before / MiB:,.0f} MiB before the step "
             f"(weights, optimizer state, data), {own / MiB:,.0f} MiB of the step's own at its peak, "
             + ("reached by " + where(events[at]) if at is not None else "nothing allocated"),
             f"{'MiB':>9} {'count':>6}  live at the peak, by where allocated"]
    lines += [f"{size / MiB:9.1f} {n:6d}  {key}" for key, (size, n) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:most]]
    return lines
