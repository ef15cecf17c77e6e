"""The README's Muon vs AdamW plot, from the logged runs in this folder (nvidia-h100-x1,
config/train_shakespeare_char.py): left, val loss over the iterations of the config's
5000-iteration runs; right, the final val loss of complete runs of N iterations (the lr
decayed to min_lr at N), against N. Run from the repo root:
$ python docs/runs/2026-11-22-issue6-s2/plot_convergence.py"""
import os, re, glob
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

HERE = os.path.dirname(os.path.abspath(__file__))
evals = lambda path: [(int(i), float(v)) for i, v in re.findall(r"^step (\d+): train loss [\d.]+, val loss ([\d.]+)",
                                                               open(path).read(), re.M)]
def finals(optimizer):
    """{N: val loss at N} over the complete runs of N iterations, seed 1337, default lrs."""
    out = {}
    for path in glob.glob(f"{HERE}/{optimizer}_*.log") + glob.glob(f"{HERE}/sweep/{optimizer}_*.log"):
        m = re.fullmatch(rf"{optimizer}_(\d+)\.log", os.path.basename(path))
        if m and int(m[1]) < 5000 and evals(path) and evals(path)[-1][0] == int(m[1]):
            out[int(m[1])] = evals(path)[-1][1]
    return dict(sorted(out.items()))
# runs whose log did not come back (device file-count limit): their final evals from sweep_call2_tail.txt
MISSING = {'muon': {750: 1.5077, 1500: 1.4555}}

fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
for name, label in [('adamw_5000', 'AdamW (config: 5000 iterations)'), ('muon_5000_lr0.02', 'Muon, same schedule'),
                    ('muon_3500_lr0.02', 'Muon, 3500-iteration schedule')]:
    it, v = zip(*evals(f"{HERE}/{name}.log"))
    a.plot(it, v, marker='.', label=label)
a.axhline(1.47, color='gray', ls='--', lw=1)
a.set(xlabel='iteration', ylabel='val loss', ylim=(1.4, 2.0), title='val loss during training (eval every 250)')
a.legend()
for opt, label in [('adamw', 'AdamW'), ('muon', 'Muon')]:
    n, v = zip(*sorted((finals(opt) | MISSING.get(opt, {})).items()))
    b.plot(n, v, marker='o', label=label)
b.axhline(1.47, color='gray', ls='--', lw=1, label='1.47')
b.set(xlabel='N: iterations of a complete run (lr decayed at N)', ylabel='val loss at N',
      title='complete runs of N iterations: smallest N reaching 1.47')
b.legend()
fig.suptitle('Shakespeare-char baby GPT, H100: Muon (lr 0.02) vs AdamW (lr 1e-3)')
fig.tight_layout()
out = os.path.join(HERE, '..', '..', 'muon_vs_adamw.png')
fig.savefig(out, dpi=110)
print(f"wrote {os.path.normpath(out)}")
for opt in ('adamw', 'muon'):
    print(opt, finals(opt) | MISSING.get(opt, {}))
