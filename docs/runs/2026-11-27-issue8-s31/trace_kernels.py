"""bench.py's trace.json of profile_steps steps: each kernel's launches a step (count, mean us, grid), and where each
of Inductor's kernels (triton_*) and each memset runs: the kernels just before and after it."""
import collections
import json
import sys

path, steps = sys.argv[1], int(sys.argv[2])
events = sorted((e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel" or
                 (e.get("cat") == "gpu_memset")), key=lambda e: e["ts"])
short = lambda e: e["name"][:60]
stats = collections.defaultdict(list)
for e in events:
    stats[short(e)].append(e)
print(f"{len(events) / steps:.0f} kernels a step")
print(f"{'name':60s} {'a step':>6s} {'mean us':>8s}  grid")
for name, es in sorted(stats.items(), key=lambda kv: -sum(e["dur"] for e in kv[1])):
    grids = sorted({str(e.get("args", {}).get("grid")) for e in es})
    print(f"{name:60s} {len(es) / steps:6.1f} {sum(e['dur'] for e in es) / len(es):8.1f}  {' '.join(grids)[:60]}")
print("\nneighbours of Inductor's kernels and memsets in the first traced step:")
first = events[:len(events) // steps]
for i, e in enumerate(first):
    if e["name"].startswith("triton_") or "emset" in e["name"]:
        before = " < ".join(short(x)[:28] for x in first[max(0, i - 2):i])
        after = " > ".join(short(x)[:28] for x in first[i + 1:i + 3])
        print(f"{i:4d} {short(e)[:45]:45s} {e['dur']:7.1f} us  [{before}] ... [{after}]")
