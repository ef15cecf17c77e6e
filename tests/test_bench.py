"""
bench.py's outputs, from small CPU runs (CUDA hidden, so on a GPU machine too): the
end-to-end table's JSON (the variants, their figures, the losses agreeing), the op sweep's
CSV, JSON and plots (Triton in the CPU interpreter), and the profile's trace and summary.
"""
import os
import csv
import sys
import json
import math
import subprocess

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from bench_kernels import CSV_COLUMNS, PASSES
import bench_startup
from test_train import run


def bench_run(tmp_path, *args, interpret=False, check=True):
    """bench.py on the CPU (CUDA hidden), as tests/test_train.py runs the scripts; Triton's interpreter if asked."""
    return run('bench.py', f'--bench_dir={tmp_path}', *args, check=check,
               env={'CUDA_VISIBLE_DEVICES': ''} | ({'TRITON_INTERPRET': '1'} if interpret else {}))


def bench(tmp_path, *args, interpret=False):
    """The output of a bench.py run that succeeds on the CPU."""
    p = bench_run(tmp_path, *args, interpret=interpret)
    assert "no CUDA here" in p.stdout
    return p.stdout


def test_end_to_end_table_and_json(tmp_path):
    out = bench(tmp_path, '--warmup_steps=1', '--timed_steps=2')
    assert "Training step, gpt2 2L 64d, batch 4x64" in out and "losses agree" in out
    r = json.load(open(tmp_path / 'bench.json'))
    assert r['device'] == 'cpu' and r['config']['timed_steps'] == 2
    runs = r['train_step']
    assert list(runs) == ['baseline eager', 'kernels eager']  # no compile on the CPU
    tokens = 4 * 64
    for name, v in runs.items():
        assert v['ms'] > 0 and v['ms_back_to_back'] > 0 and v['tokens_per_s'] == pytest.approx(tokens / v['ms'] * 1e3)
        assert v['vs_baseline_compiled_back_to_back'] is None  # no compiled baseline on the CPU
        assert v['mfu'] is None and v['peak_mem_mib'] is None  # a CPU has neither a known peak nor CUDA memory
        assert math.isfinite(v['final_loss']) and 0 < v['final_loss'] < math.log(512) + 1
        assert v['vs_baseline_eager'] == pytest.approx(runs['baseline eager']['ms'] / v['ms'])
        assert set(v['kernels']) == {'layer_norm', 'gelu', 'attention', 'cross_entropy', 'optimizer'}
    # Triton cannot run here: the kernels variant is PyTorch everywhere, the baseline's model and steps to the bit
    assert set(runs['kernels eager']['kernels'].values()) == {'torch'}
    assert runs['kernels eager']['loss_diff'] == 0, runs
    assert r['losses_agree'] is True


def test_a_grouped_query_llama_shrinks_to_the_cpus_model(tmp_path):
    """The CPU's small model has 4 heads: 16 heads in pairs (8 key/value heads) become 4 heads in pairs (2 key/value
    heads), not a refusal."""
    out = bench(tmp_path, '--warmup_steps=1', '--timed_steps=2', '--arch=llama', '--n_head=16', '--n_kv_head=8',
                '--variants=kernels eager')
    assert "(2 layers, 4 heads, 2 of keys and values," in out and "Training step, llama 2L 64d" in out, out


def test_sustained_steps_add_their_table(tmp_path):
    out = bench(tmp_path, '--warmup_steps=1', '--timed_steps=2', '--sustained_steps=4')
    assert "Sustained: 4 steps back to back after 2 more" in out
    r = json.load(open(tmp_path / 'bench.json'))
    for v in r['train_step'].values():
        assert v['ms_sustained'] > 0
        assert v['joules_per_step'] is None  # no GPU energy counter on the CPU
    ms = {v: r['train_step'][v]['ms_sustained'] for v in ('baseline eager', 'kernels eager')}
    table = out[out.index("Sustained:"):].splitlines()
    row = next(line.split() for line in table if line.strip().startswith('kernels eager'))
    assert row == ['kernels', 'eager', f"{ms['kernels eager']:.2f}", 'n/a', 'n/a',
                   f"{ms['baseline eager'] / ms['kernels eager']:.2f}x"]


def test_variants_runs_only_those_asked(tmp_path):
    bench(tmp_path, '--warmup_steps=1', '--timed_steps=2', '--variants=kernels eager, baseline eager')
    r = json.load(open(tmp_path / 'bench.json'))
    assert list(r['train_step']) == ['baseline eager', 'kernels eager'] and r['loss_reference'] == 'baseline eager'
    bench(tmp_path, '--warmup_steps=1', '--timed_steps=2', '--variants=kernels eager')
    r = json.load(open(tmp_path / 'bench.json'))
    # no baseline in the run: no ratio to it, and the losses are compared with the one variant there is
    assert list(r['train_step']) == ['kernels eager'] and r['loss_reference'] == 'kernels eager'
    assert r['train_step']['kernels eager']['vs_baseline_eager'] is None


def test_unknown_variant_and_other_settings_it_cannot_take_are_one_line_errors(tmp_path):
    p = bench_run(tmp_path, '--variants=kernel eager', check=False)
    assert p.returncode != 0 and 'Traceback' not in p.stderr, p.stderr
    assert p.stderr.strip() == ("error: variants ['kernel eager'] are not among ['baseline eager', 'kernels eager'] "
                                "(no compiled or graphed variants without CUDA)")
    p = bench_run(tmp_path, '--kernels', '--kernel_ops=layer_norm,nope', interpret=True, check=False)
    assert p.returncode != 0 and p.stderr.strip().startswith("error: kernel_ops ['nope'] are not among"), p.stderr
    for args, error in ((['--timed_steps=0'], "error: timed_steps=0 and warmup_steps=10: at least 1 and 0"),
                        (['--kernels'], "error: kernels=True times the Triton kernels, and here tensors on cpu need "
                                        "CUDA (or TRITON_INTERPRET=1)"),
                        (['--use_triton_rms_norm=True'], "error: use_triton_rms_norm: arch='gpt2' has no such op"),
                        (['--arch=llama', '--n_kv_head=5'], "error: n_layer, n_head, n_kv_head, n_embd, block_size")):
        p = bench_run(tmp_path, *args, check=False)
        assert p.returncode != 0 and p.stderr.strip().startswith(error), p.stderr
        assert "[1/" not in p.stdout, p.stdout  # before any variant runs
    # fp8 reads the copies AdamW keeps, and here (fp32, PyTorch's AdamW) there are none
    p = bench_run(tmp_path, '--fp8=True', '--variants=kernels eager', check=False)
    assert p.returncode != 0 and p.stderr.strip().startswith("error: fp8=True: the fp8 products read the copies AdamW "
                                                             "keeps, and this run keeps none"), p.stderr


# nanoGPT's model.py interface, as bench.py's --nanogpt uses it (the real file is not in this repository)
NANOGPT_STAND_IN = """
from dataclasses import dataclass
import torch, torch.nn as nn, torch.nn.functional as F

@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True

class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        print(f"stand-in built: {config}")

    def get_num_params(self, non_embedding=True):
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx, targets=None):
        logits = self.lm_head(self.wte(idx))
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        return torch.optim.AdamW(self.parameters(), lr=learning_rate, betas=betas, weight_decay=weight_decay)
"""


def test_nanogpts_own_model_runs_beside_the_baselines(tmp_path):
    model_py = tmp_path / 'model.py'
    model_py.write_text(NANOGPT_STAND_IN)
    out = bench(tmp_path, '--warmup_steps=1', '--timed_steps=2', f'--nanogpt={model_py}')
    assert ("stand-in built: GPTConfig(block_size=64, vocab_size=512, n_layer=2, n_head=4, n_embd=64, "
            "dropout=0.0, bias=False)") in out
    r = json.load(open(tmp_path / 'bench.json'))
    assert list(r['train_step']) == ['nanogpt eager', 'baseline eager', 'kernels eager']
    run = r['train_step']['nanogpt eager']
    assert run['kernels'] is None and run['ms'] > 0 and math.isfinite(run['final_loss'])
    assert r['nanogpt_reference'] == 'nanogpt eager'  # (on a GPU its compiled run): the issues' ratios, printed
    kernels = r['train_step']['kernels eager']
    assert kernels['vs_nanogpt'] == pytest.approx(run['ms'] / kernels['ms'])
    assert kernels['memory_vs_nanogpt'] is None  # no peak on the CPU
    head = next(line for line in out.splitlines() if line.lstrip().startswith('variant'))
    assert head.endswith('vs nanogpt eager  memory vs nanogpt eager'), head
    for args, error in ((['--nanogpt=missing.py'], "error: nanogpt='missing.py': no such file"),
                        ([f'--nanogpt={model_py}', '--arch=llama'],
                         f"error: nanogpt='{model_py}': nanoGPT's model is GPT-2 only")):
        p = bench_run(tmp_path, *args, check=False)
        assert p.returncode != 0 and p.stderr.strip() == error, p.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CPU-interpreter run: the GPU machines' torch 2.11 refuses "
                    "the interpreter's kernels in wrap_triton (CI's torch 2.13 takes them)")
def test_kernel_sweep_writes_csv_json_and_plots(tmp_path):
    out = bench(tmp_path, '--kernels', '--kernel_ops=layer_norm,attention,rowwise_fp8', interpret=True)
    assert "[1/" in out and "wrote kernels.csv" in out  # progress, then the files
    with open(tmp_path / 'kernels.csv') as f:
        rows = list(csv.DictReader(f))
    assert rows and list(rows[0]) == CSV_COLUMNS
    assert len(json.load(open(tmp_path / 'kernels.json'))['rows']) == len(rows)
    ops = {(r['op'], r['shape'], r['sweep'] or None) for r in rows}
    # the model's shapes (the fp8 cast at three widths) and each sweep point: layer_norm at 2 widths, attention at 2
    # lengths, the fp8 cast at 2 widths
    assert {o for o, shape, s in ops if s is None} == {'layer_norm', 'attention', 'rowwise_fp8'} and len(ops) == 11
    for r in rows:
        assert r['pass'] in (('fwd',) if r['op'] == 'rowwise_fp8' else PASSES)  # the cast has no gradient
        assert r['unit'] == ('TFLOP/s' if r['op'] == 'attention' else 'GB/s')
        if r['impl'] == 'triton' and r['op'] == 'attention':  # the kernel takes bf16 and fp16: fp32 here fails, shown
            assert r['call_ms'] == '' and r['rate'] == ''
            continue
        failed = [line for line in out.splitlines() if 'Error' in line]
        assert r['call_ms'] and float(r['call_ms']) > 0 and float(r['rate']) > 0, (r, failed)
        assert float(r['max_err']) < 1e-4, r  # fp32 against float64; the cast of fp32 inputs is exact (0)
    assert {r['impl'] for r in rows if r['op'] == 'layer_norm'} == {'triton', 'torch'}
    assert {r['impl'] for r in rows if r['op'] == 'attention'} == {'triton', 'torch', 'naive'}
    assert "triton fwd: RuntimeError: flash_attention: backend='triton' cannot run here" in out
    for png in ('kernels_layer_norm.png', 'kernels_attention_d16.png', 'kernels_rowwise_fp8.png'):
        assert open(tmp_path / png, 'rb').read(8) == b'\x89PNG\r\n\x1a\n'


def test_profile_writes_a_trace_and_a_summary(tmp_path):
    out = bench(tmp_path, '--profile', '--warmup_steps=1', '--profile_steps=1')
    trace = json.load(open(tmp_path / 'trace.json'))
    assert any(e.get('name') == 'aten::mm' for e in trace['traceEvents'])
    summary = open(tmp_path / 'profile.txt').read().splitlines()
    assert summary[0].startswith('kernels eager, cpu: ') and 'ms per step' in summary[0]
    assert len(summary) > 10 and 'aten::mm' in '\n'.join(summary)
    assert json.load(open(tmp_path / 'bench.json'))['profile']['variant'] == 'kernels eager'
    assert 'trace.json' in out


def test_memory_groups_what_is_live_at_the_peak_by_where_it_was_allocated(tmp_path, monkeypatch):
    import bench_memory
    monkeypatch.setattr(bench_memory, 'cache_dir', lambda: str(tmp_path))  # Inductor's generated code is there
    code = tmp_path / 'ab' / 'cabc.py'  # two layers' buffers of one kind, each on its own line
    code.parent.mkdir()
    code.write_text("buf7 = empty_strided_cuda((4, 8), (8, 1), torch.bfloat16)\n"
                    "buf21 = empty_strided_cuda((4, 8), (8, 1), torch.bfloat16)\n")
    frame = lambda filename, line: {'filename': str(filename), 'line': line, 'name': 'f'}
    torch_op = frame('/usr/lib/python3/site-packages/torch/nn/functional.py', 3)
    # innermost first: PyTorch's own frame, then the first of ours or Inductor's counts, not the outer ones
    ours = lambda line: [torch_op, frame(os.path.join(ROOT, 'model.py'), line), frame(code, 1),
                         frame(os.path.join(ROOT, 'bench.py'), 1)]
    inductor = lambda line: [torch_op, frame(code, line), frame(os.path.join(ROOT, 'model.py'), 1)]
    alloc = lambda addr, mib, frames: dict(action='alloc', addr=addr, size=mib * 2 ** 20, frames=frames)
    freed = lambda action, addr, mib: dict(action=action, addr=addr, size=mib * 2 ** 20, frames=[])
    free = lambda addr, mib: [freed('free_requested', addr, mib), freed('free_completed', addr, mib)]
    events = [alloc(1, 10, ours(5)), alloc(2, 20, inductor(1)), *free(99, 50),  # 99: made before the recording
              alloc(3, 5, ours(5)), alloc(6, 3, inductor(2)), alloc(4, 1, [torch_op]),
              freed('free_requested', 2, 20),  # freed by the program; the allocator completes it later
              alloc(5, 20, ours(9)), freed('free_completed', 2, 20), *free(1, 10), alloc(7, 10, [])]
    own, at, live = bench_memory.live_at_peak(events)
    # 10, 30, 35, 38, 39 MiB, then 19 + 20 = 39 again (a tie: the first reach counts), 29, 39 once more
    assert own == 39 * 2 ** 20 and at == 6 and sorted(e['addr'] for e in live) == [1, 2, 3, 4, 6]
    lines, own, rows = bench_memory.report('test', events, 100 * 2 ** 20, 139 * 2 ** 20)
    assert lines[0].startswith('test: peak 139 MiB allocated; 100 MiB before the step')
    assert '39 MiB asked for by the step at its peak, reached by elsewhere: functional.py:3' in lines[0]
    table = [l.split(None, 2) for l in lines[2:]]
    assert [(float(mib), int(n)) for mib, n, _ in table] == [(23.0, 2), (15.0, 2), (1.0, 1)]
    assert table[0][2] == "Inductor's cabc.py: empty_strided_cuda((4, 8), (8, 1), torch.bfloat16)"
    assert table[1][2].startswith('model.py:5 ') and table[2][2] == 'elsewhere: functional.py:3'
    assert bench_memory.where(events[-1], str(tmp_path)) == "no Python frame (PyTorch's own backward ops)"
    assert bench_memory.live_at_peak([]) == (0, None, [])


def test_memory_without_cuda_says_so(tmp_path):
    out = bench(tmp_path, '--memory')
    assert "memory needs CUDA" in out and "Training step" not in out and not (tmp_path / 'bench.json').exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the allocator's history is CUDA's")
def test_memory_writes_where_the_steps_peak_sits(tmp_path):
    p = subprocess.run([sys.executable, 'bench.py', f'--bench_dir={tmp_path}', '--memory',
                        '--memory_variant=kernels eager', '--n_layer=2', '--n_embd=128', '--n_head=2',
                        '--block_size=128', '--batch_size=4', '--vocab_size=512', '--warmup_steps=2'],
                       cwd=ROOT, env=dict(os.environ, KERNELS_CACHE=''), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    lines = open(tmp_path / 'memory.txt').read().splitlines()
    assert lines[0].startswith('kernels eager, ') and 'MiB before the step' in lines[0]
    rows = [l.split(None, 2) for l in lines[2:]]
    assert rows and any(key.startswith('model.py:') for _, _, key in rows)
    r = json.load(open(tmp_path / 'bench.json'))['memory']
    assert r['variant'] == 'kernels eager' and r['peak_mib'] > r['before_mib'] > 0


TINY_TRAIN = ('--startup_args=--device=cpu --compile=False --n_layer=1 --n_head=2 --n_embd=32 --block_size=32 '
              '--batch_size=2 --gradient_accumulation_steps=1 --eval_iters=2')


def test_startup_times_each_stage_of_a_cold_start_then_two_warm_ones(tmp_path):
    out = bench(tmp_path, '--startup')  # on the CPU, train.py's model is the CPU's small one
    results = json.load(open(tmp_path / 'bench.json'))
    r = results['startup']
    assert r['command'].startswith('train.py config/train_gpt2.py --dataset=') and '--max_iters=0' in r['command']
    assert all(f' {arg}' in r['command'] for arg in ('--n_layer=2', '--n_head=4', '--n_embd=64', '--compile=False'))
    for start in ('cold', 'warm', 'warm again'):
        seconds = list(r[start].values())
        assert list(r[start]) == list(bench_startup.STAGES) and 0 < seconds[0] and seconds == sorted(seconds), r
    width, last = max(map(len, bench_startup.STAGES)), 'first step (iter 0:)'
    assert f"{last:<{width}}  {r['cold'][last]:10.1f}  {r['warm'][last]:10.1f}  {r['warm again'][last]:10.1f}" in out
    assert 'train_step' not in results  # only what was asked: no end-to-end table


def test_startup_says_why_when_train_py_fails(tmp_path):
    p = bench_run(tmp_path, '--startup', '--startup_config=config/no_such_config.py', TINY_TRAIN, check=False)
    assert p.returncode != 0 and "error: train.py's cold start failed or printed no first step" in p.stdout + p.stderr
