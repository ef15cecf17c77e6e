"""
bench.py --memory: where a training step's peak memory sits. One step runs with the CUDA caching
allocator's history recorded (torch.cuda.memory._record_memory_history); the tensors live at the
step's peak are grouped by where they were allocated: the innermost frame in this repository (file
and line) or in Inductor's generated code. What it is for: seeing what a recompute setting or the
loss's chunk would have to free to move the peak (docs/perf-notes.md, where the steps' peaks sit).
Sizes are the bytes asked for; torch.cuda.max_memory_allocated counts the allocator's blocks, which
can be somewhat larger, so the peak it reports may sit a few MiB above the sums here.
"""
import os
import re
import collections
import linecache

import torch
from torch._inductor.runtime.cache_dir_utils import cache_dir

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

def where(event, inductor_dir):
    """Where an allocation was made: the innermost frame in this repository (file and line), or in
    Inductor's generated code under inductor_dir, by the statement without the buffer's name, so that
    the layers' buffers of one kind (each made on a line of its own) come together."""
    frames = event.get('frames', [])
    for frame in frames:
        name = frame['filename']
        ours = name.startswith(ROOT + os.sep)
        if ours or name.startswith(inductor_dir + os.sep):  # only these frames' source is read
            source = linecache.getline(name, frame['line']).strip()
            if ours:
                return f"{os.path.relpath(name, ROOT)}:{frame['line']} {source[:100]}"
            return f"Inductor's {os.path.basename(name)}: {re.sub(r'^buf[0-9]+ = ', '', source)[:100]}"
    if not frames:  # autograd's backward thread runs no Python while it makes PyTorch's gradients
        return "no Python frame (PyTorch's own backward ops)"
    return 'elsewhere: ' + ' < '.join(f"{os.path.basename(f['filename'])}:{f['line']}" for f in frames[:3])

def _walk(events):
    """(index, the allocations live after that event by address, their bytes), event by event. A block
    counts as free when the program frees it (free_requested), as torch.cuda.memory_allocated does;
    blocks allocated before the recording are not in it, so their frees are skipped."""
    live, now = {}, 0
    for i, e in enumerate(events):
        if e['action'] == 'alloc':
            live[e['addr']] = e
            now += e['size']
        elif e['action'] == 'free_requested' and e['addr'] in live:
            now -= live.pop(e['addr'])['size']
        yield i, live, now

def live_at_peak(events):
    """(bytes the step itself had allocated at its peak, the event that first reached it, the
    allocations live then)."""
    peak, at = 0, None
    for i, _, now in _walk(events):
        if now > peak:
            peak, at = now, i
    for i, live, _ in _walk(events):
        if i == at:
            return peak, at, list(live.values())
    return 0, None, []

def breakdown(events):
    """(the step's own bytes at its peak, where the peak was reached, [(where, bytes, count)] of the
    allocations live then, largest first)."""
    own, at, live = live_at_peak(events)
    inductor_dir = cache_dir()
    groups = collections.defaultdict(lambda: [0, 0])
    for e in live:
        group = groups[where(e, inductor_dir)]
        group[0] += e['size']
        group[1] += 1
    rows = sorted(((key, size, n) for key, (size, n) in groups.items()), key=lambda row: -row[1])
    return own, None if at is None else where(events[at], inductor_dir), rows

def report(title, events, before, peak_allocated, most=30):
    """The text of the breakdown: the step's peak, what was allocated before it, and the allocations
    live at the peak grouped by where() made them, largest first."""
    own, reached_by, rows = breakdown(events)
    lines = [f"{title}: peak {peak_allocated / MiB:,.0f} MiB allocated; {before / MiB:,.0f} MiB before the step "
             f"(weights, optimizer state, data), {own / MiB:,.0f} MiB asked for by the step at its peak, "
             + (f"reached by {reached_by}" if reached_by else "nothing allocated"),
             f"{'MiB':>9} {'count':>6}  live at the peak, by where allocated"]
    lines += [f"{size / MiB:9.1f} {n:6d}  {key}" for key, size, n in rows[:most]]
    return lines, own, rows
