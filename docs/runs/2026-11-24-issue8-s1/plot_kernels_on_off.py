"""The README's kernels-on vs kernels-off plot (issue 8's convergence points), from the logs of
calls 4-6 in this folder and call 6 of ../2026-11-24-issue8-s2 (nvidia-h100-x1, compiled, bf16):
left, config/train_shakespeare_char.py as it is (5000 iterations, the whole step as one CUDA graph;
kernels='triton' except the attention, which has no dropout, against kernels='torch'; s2's call 6);
the same with compile_mode='reduce-overhead' (call 6 here) and without CUDA graphs (call 4) is
printed; right, GPT-2 124M on Tiny Shakespeare in GPT-2 BPE, 600 iterations of 12x1024
tokens (every Triton kernel against PyTorch, and PyTorch with another seed for the noise). Prints
the largest and mean gaps between the curves. Run from the repo root:
$ python docs/runs/2026-11-24-issue8-s1/plot_kernels_on_off.py
With a folder (from the repo root) holding newer runs of both pairs under the same log names
(train_kernels_<kernels>.log, gpt2_bpe_<kernels>.log), it plots those instead, beside this folder's
other-seed PyTorch run as the noise reference:
$ python docs/runs/2026-11-24-issue8-s1/plot_kernels_on_off.py docs/runs/2026-11-26-issue5-s7/call5"""
import os
import re
import sys
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

HERE = os.path.dirname(os.path.abspath(__file__))

def val_curve(log):
    """{iteration: val loss} of the evals logged by train.py."""
    text = open(os.path.join(HERE, log)).read()
    return {int(i): float(v) for i, v in re.findall(r"^step (\d+): train loss [\d.]+, val loss ([\d.]+)", text, re.M)}

def gap(a, b):
    """(largest, mean) |a - b| over the evals after step 0."""
    d = [abs(a[i] - b[i]) for i in a if i and i in b]
    return max(d), sum(d) / len(d)

newer = os.path.relpath(os.path.abspath(sys.argv[1]), HERE) if len(sys.argv) > 1 else None
char, bpe = (newer, newer) if newer else ('../2026-11-24-issue8-s2/call6', 'call5')
panels = [('Shakespeare-char config (5000 iterations, dropout 0.2)',
           [('kernels on', f'{char}/train_kernels_triton.log'),
            ('kernels off', f'{char}/train_kernels_torch.log')], (1.4, 2.2)),
          ('GPT-2 124M, Tiny Shakespeare BPE, 12x1024 tokens per iteration',
           [('kernels on', f'{bpe}/gpt2_bpe_triton.log'), ('kernels off', f'{bpe}/gpt2_bpe_torch.log'),
            ('kernels off, another seed' + (' (2026-11-24)' if newer else ''), 'call5/gpt2_bpe_torch_seed1338.log')],
           (4.7, 6.0))]
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
for ax, (title, runs, ylim) in zip(axes, panels):
    curves = {label: val_curve(log) for label, log in runs}
    for label, curve in curves.items():
        ax.plot(list(curve), list(curve.values()), marker='.', label=label)
    ax.set(xlabel='iteration', ylabel='val loss', ylim=ylim, title=title)
    ax.legend()
    on, off = curves['kernels on'], curves['kernels off']
    print(f"{title}: on vs off largest gap {gap(on, off)[0]:.4f}, mean {gap(on, off)[1]:.4f}; "
          f"best val on {min(on.values()):.4f}, off {min(off.values()):.4f}")
    seed = next((label for label in curves if label.startswith('kernels off, another seed')), None)
    if seed:
        seeds = gap(off, curves[seed])
        print(f"  two seeds of PyTorch: largest gap {seeds[0]:.4f}, mean {seeds[1]:.4f}")
for setting, call in () if newer else (("compile_mode='reduce-overhead'", 'call6'), ("compile_mode='default'", 'call4')):
    on, off = val_curve(f'{call}/train_kernels_triton.log'), val_curve(f'{call}/train_kernels_torch.log')
    print(f"Shakespeare-char, {setting} ({call}): on vs off largest gap {gap(on, off)[0]:.4f}, mean "
          f"{gap(on, off)[1]:.4f}; best val on {min(on.values()):.4f}, off {min(off.values()):.4f}")
axes[0].axhline(1.48, color='gray', ls='--', lw=1)
fig.suptitle('Triton kernels on vs off, H100, compiled, bf16: val loss at every eval')
fig.tight_layout()
out = os.path.normpath(os.path.join(HERE, '..', '..', 'kernels_on_off.png'))
fig.savefig(out, dpi=110)
print(f"wrote {out}")
