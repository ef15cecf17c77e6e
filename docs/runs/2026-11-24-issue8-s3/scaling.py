"""scaling.py ONE_GPU_LOG N_GPU_LOG N: tokens/s per GPU of each train.py log (median over
iterations 12 and later), the ratio, and the losses side by side."""
import re
import sys
import statistics

def read(path):
    text = open(path).read()
    rows = re.findall(r"^iter (\d+): loss ([\d.]+), time [\d.]+ms, ([\d,]+) tok/s", text, re.M)
    return {int(i): (float(loss), float(tps.replace(',', ''))) for i, loss, tps in rows}, text

one, one_text = read(sys.argv[1])
many, many_text = read(sys.argv[2])
n = int(sys.argv[3])
per_gpu = [statistics.median(tps for i, (_, tps) in run.items() if i >= 12) / gpus if any(i >= 12 for i in run) else None
           for run, gpus in ((one, 1), (many, n))]
print(f"tokens/s per GPU: 1 GPU {per_gpu[0]}, {n} GPUs {per_gpu[1]}",
      f"ratio {per_gpu[1] / per_gpu[0]:.3f}" if None not in per_gpu else "ratio n/a (a run did not reach iteration 12)")
for label, text in (('1 GPU', one_text), (f'{n} GPUs', many_text)):
    print(label, '|', ' | '.join(line for line in text.splitlines() if line.startswith(('kernels:', 'cuda_graph:', 'ddp:', '[rc='))))
print('iter | loss 1 GPU | loss N GPUs')
for i in sorted(set(one) | set(many)):
    print(i, one.get(i, (None,))[0], many.get(i, (None,))[0])
common = sorted(set(one) & set(many))
if common:
    print('largest loss difference:', max(abs(one[i][0] - many[i][0]) for i in common))
