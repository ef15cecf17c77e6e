"""
Tests of kernels/choose.py's measurement for kernels='auto': PyTorch everywhere where Triton
cannot run (nothing measured), the cache (a hit measures nothing; another shape, dtype,
compile, pass or library version measures again), a real measurement of ops (they agree, both
timed), a wrong kernel losing, the one of less GPU time winning, the measured choices and the
user's overrides becoming the model's map (resolve), and the cases measuring the ops as the
model runs them.
"""
import json

import pytest
import torch

import kernels
import kernels.choose as choose
from model import GPT, GPTConfig


def tiny(**kw):
    """The smallest GPT these tests build."""
    return GPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=8, vocab_size=65, **kw)


def fake_compare(calls):
    def compare(make, fn, compile, backward=True):
        calls.append((fn, backward))
        return dict(impl='triton', triton_ms=1.0, torch_ms=2.0, why=None, failed=False)
    return compare


def cases(B=2, dtype=torch.float32, ops=('layer_norm', 'gelu')):
    return choose.op_cases(ops, tiny(), B, dtype, 'cpu')


def test_no_triton_here_means_pytorch_and_no_measurement(monkeypatch):
    monkeypatch.setattr(kernels.backend, 'INTERPRET', False)
    calls = []
    monkeypatch.setattr(choose, 'compare', fake_compare(calls))
    got = choose.choose(cases(), torch.float32, False, 'cpu', None)
    assert calls == [] and {r['impl'] for r in got.values()} == {'torch'}
    assert got['gelu']['why'] == "tensors on cpu need CUDA (or TRITON_INTERPRET=1)" and not got['gelu']['failed']


def test_cache_hit_measures_nothing_and_changes_measure_again(tmp_path, monkeypatch):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)  # as on a GPU
    path, calls = str(tmp_path / 'cache.json'), []
    monkeypatch.setattr(choose, 'compare', fake_compare(calls))
    first = choose.choose(cases(), torch.float32, False, 'cpu', path)
    assert len(calls) == 2 and first['gelu']['triton_ms'] == 1.0
    assert len(json.load(open(path))) == 2
    assert choose.choose(cases(), torch.float32, False, 'cpu', path) == first and len(calls) == 2
    choose.choose(cases(B=3), torch.float32, False, 'cpu', path)  # other shapes
    assert len(calls) == 4
    choose.choose(cases(), torch.bfloat16, False, 'cpu', path)  # other dtype
    choose.choose(cases(), torch.float32, True, 'cpu', path)  # compiled
    assert len(calls) == 8
    choose.choose(cases(), torch.float32, False, 'cpu', path, backward=False)  # the forward alone (sampling)
    assert len(calls) == 10
    monkeypatch.setattr(torch, '__version__', '0.0.0')  # another PyTorch
    choose.choose(cases(), torch.float32, False, 'cpu', path)
    assert len(calls) == 12
    choose.choose(cases(), torch.float32, False, 'cpu', None)  # no cache: always measured
    assert len(calls) == 14 and len(json.load(open(path))) == 12


@pytest.mark.parametrize("op, dtype", [("layer_norm", torch.float32), ("swiglu", torch.float32),
                                       ("rotary", torch.float32), ("cross_entropy", torch.bfloat16)])
def test_real_measurement_agrees_and_times_both(op, dtype, device):
    shapes, make, fn = choose.op_cases([op], tiny(), 2, dtype, device)[op]
    r = choose.compare(make, fn, compile=False)
    assert r['why'] is None and not r['failed'] and r['impl'] in ('triton', 'torch')
    assert r['triton_ms'] > 0 and r['torch_ms'] > 0


def test_time_ms_back_to_back_hides_the_host_time_the_gpu_is_busy_through(device):
    """A call whose host work (4 ms asleep) comes before longer GPU work (a busy-wait): waited for one by one, each
    call's time holds both; back to back, the host prepares the next call while the GPU works, so only the GPU's
    time shows."""
    import time
    if device != 'cuda':
        pytest.skip("CUDA events: the CPU times each call by the wall clock either way")
    gpu_work = lambda: torch.cuda._sleep(2 * 10**7)  # cycles: ~10 ms at the H100's clock
    gpu_ms = choose.time_ms(gpu_work, 5, warmup=2)
    assert gpu_ms > 6  # the GPU's part outlasts the host's, as what follows needs
    call = lambda: (time.sleep(0.004), gpu_work())
    waited, back_to_back = (choose.time_ms(call, 10, warmup=1, wait_each=w) for w in (True, False))
    # (the margins allow the GPU's clock to drift by 10% between the three timings)
    assert waited > 0.9 * gpu_ms + 3.5 and back_to_back < 1.1 * gpu_ms + 0.3 and back_to_back < waited - 2.5, \
        (gpu_ms, waited, back_to_back)


def test_peak_mib_counts_what_one_call_holds_at_once_beyond_what_was_there(device):
    if device == 'cuda':
        torch.cuda.empty_cache()  # a larger cached block would be handed out whole, and counted so
    _resident = torch.zeros(2**20, device=device)  # there before: not counted
    # a 16 MiB temporary and a 16 MiB result alive together
    got = choose.peak_mib(lambda: torch.empty(2**22, device=device) + 1)
    assert got is None if device == 'cpu' else got == 32.0


def test_a_failed_capture_leaves_the_random_draws_as_they_were(device, capsys):
    """graph_ms gives None where a call cannot be captured (here a host sync), and the CUDA
    generator goes on as if no capture had begun: the next draw is the one it would have been."""
    if device != 'cuda':
        pytest.skip("graph_ms measures nothing without CUDA")
    x = torch.ones(4, device=device)
    torch.cuda.manual_seed(1)
    expected = torch.randn(8, device=device)
    torch.cuda.manual_seed(1)
    assert choose.graph_ms(lambda: x.sum().item()) is None
    assert "CUDA graph capture failed" in capsys.readouterr().out
    torch.testing.assert_close(torch.randn(8, device=device), expected, rtol=0, atol=0)
    assert choose.graph_ms(lambda: x.add_(1)) > 0  # and a later capture works


def test_a_wrong_kernel_loses(device):
    shapes, make, fn = choose.op_cases(['gelu'], tiny(), 2, torch.float32, device)['gelu']
    wrong = lambda be: (lambda h, b: fn(be)(h, b) * (1.5 if be == 'triton' else 1.0))
    r = choose.compare(make, wrong, compile=False)
    assert r['impl'] == 'torch' and r['triton_ms'] is None and r['why'].startswith("Triton off by") and r['failed']
    assert r['torch_ms'] > 0


@pytest.mark.parametrize("compile", [False, True])
@pytest.mark.parametrize("triton_ms, winner", [(1.0, 'triton'), (3.0, 'torch')])
def test_the_one_of_less_gpu_time_wins(monkeypatch, compile, triton_ms, winner, device):
    """compare times each side by its GPU time (a CUDA graph's replay: gpu_ms), PyTorch's first, each
    under torch.compile where the model will be compiled."""
    times, timed = iter([2.0, triton_ms]), []
    monkeypatch.setattr(choose, 'gpu_ms', lambda f, inputs, backward: timed.append(backward) or next(times))
    compiled = []
    monkeypatch.setattr(torch, 'compile', lambda f: compiled.append(f) or f)  # the decision, not the compiler
    shapes, make, fn = choose.op_cases(['gelu'], tiny(), 2, torch.float32, device)['gelu']
    r = choose.compare(make, fn, compile)
    assert r == dict(impl=winner, triton_ms=triton_ms, torch_ms=2.0, why=None, failed=False)
    assert timed == [True, True] and len(compiled) == (2 if compile else 0)
    times, timed = iter([2.0, triton_ms]), []
    assert choose.compare(make, fn, compile, backward=False)['impl'] == winner and timed == [False, False]


def test_measured_choices_become_the_models_map(monkeypatch):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)  # as on a GPU
    monkeypatch.setattr(choose, 'compare', fake_compare([]))
    cfg = tiny(dropout=0.1)
    measured, timings = choose.measure(cfg, 2, torch.float32, 'cpu', False, cache_path=None)
    assert set(timings) == {'layer_norm', 'gelu', 'cross_entropy'}  # attention with dropout: SDPA only
    assert measured == dict(layer_norm='triton', gelu='triton', cross_entropy='triton')
    # measured faster: Triton even for what 'auto' leaves to PyTorch unmeasured (LayerNorm, GELU)
    assert choose.resolve('auto', cfg, 'cuda', measured=measured) == dict(
        layer_norm='triton', gelu='triton', attention='torch', cross_entropy='triton', optimizer='triton')


def test_the_users_overrides_win_and_are_not_measured(monkeypatch, capsys):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)
    calls = []
    monkeypatch.setattr(choose, 'compare', fake_compare(calls))
    cfg, overrides = tiny(arch='llama'), dict(rms_norm=False, rotary=None, attention=True)
    measured, timings = choose.measure(cfg, 2, torch.float32, 'cpu', False, overrides=overrides, cache_path=None)
    assert set(timings) == {'rotary', 'swiglu', 'cross_entropy'} and len(calls) == 3
    assert measured == dict(rotary='triton', swiglu='triton', cross_entropy='triton')
    assert choose.resolve('auto', cfg, 'cuda', overrides, measured) == dict(
        rms_norm='torch', rotary='triton', swiglu='triton', attention='triton', cross_entropy='triton',
        optimizer='triton')
    assert "  swiglu: triton (GPU time per call: Triton 1.000 ms, PyTorch 2.000 ms)" in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"use_triton_attention='off': each override is True, False or None"):
        choose.resolve('auto', cfg, 'cuda', dict(attention='off'), measured)  # a text would be True
    with pytest.raises(ValueError, match=r"use_triton_layer_norm: arch='llama' has no such op"):
        choose.resolve('auto', cfg, 'cuda', dict(layer_norm=True), measured)  # not silently ignored
    # sampling: forward only, and no loss to measure
    measured, timings = choose.measure(cfg, 1, torch.float32, 'cpu', False, backward=False, cache_path=None)
    assert set(timings) == {'rms_norm', 'rotary', 'swiglu', 'attention'} and {b for _, b in calls[3:]} == {False}


def test_bf16_ops_are_measured_under_autocast_as_the_model_runs_them(device):
    # the model's LayerNorm gets bf16 activations and fp32 weights; only autocast makes
    # PyTorch's eager LayerNorm take them on CUDA
    got = choose.choose(choose.op_cases(['layer_norm'], tiny(), 2, torch.bfloat16, device),
                        torch.bfloat16, False, device, None)
    assert got['layer_norm']['why'] is None and got['layer_norm']['torch_ms'] > 0


def test_a_kernel_that_fails_here_leaves_its_op_to_pytorch_with_a_warning(monkeypatch, capsys, device):
    import triton
    import kernels.norm as norm

    def cannot_launch(*args, **kwargs):
        raise triton.runtime.errors.OutOfResources(300000, 232448, 'shared memory')
    monkeypatch.setattr(norm._norm_fwd_kernel, 'run', cannot_launch)
    cfg = tiny()
    measured, timings = choose.measure(cfg, 2, torch.float32, device, False, cache_path=None,
                                       overrides=dict(mlp=False, attention=False, cross_entropy=False))
    assert measured == dict(layer_norm='torch') and timings['layer_norm']['failed']
    assert timings['layer_norm']['why'].startswith("Triton failed: OutOfResources")
    assert "  WARNING: layer_norm: torch" in capsys.readouterr().out
    idx = torch.randint(65, (2, 8), device=device)
    GPT(cfg, choose.resolve('auto', cfg, device, measured=measured)).to(device)(idx, idx)  # the measured choice runs
    with pytest.raises(triton.runtime.errors.OutOfResources):  # kernels='triton' does not hide the failure
        GPT(cfg, choose.resolve('triton', cfg, device)).to(device)(idx, idx)


@pytest.mark.parametrize("bias, gelu, recompute, whole_mlp", [
    (False, 'tanh', 'none', True), (False, 'tanh', 'mlp', True), (False, 'tanh', 'activation', False),
    (True, 'tanh', 'none', False), (False, 'none', 'none', False)])
def test_the_cases_measure_the_mlp_and_the_loss_as_the_model_runs_them(bias, gelu, recompute, whole_mlp, device,
                                                                      monkeypatch):
    """GELU's case is the whole MLP (kernels.gelu_mlp) where the model runs it as one op (GPTConfig.gelu_mlp, but
    not with recompute='activation'), else the GELU kernel in the model's form; the loss's case has the model's
    chunk (smaller with recompute)."""
    config = tiny(bias=bias, gelu_approximate=gelu)
    model = GPT(config, choose.resolve('triton', config, device), recompute=recompute)
    assert model.transformer.h[0].mlp.one_op == whole_mlp
    got = choose.op_cases(['gelu', 'cross_entropy'], config, 2, torch.float32, device, recompute)
    assert ('MLP tanh' in got['gelu'][0]) == whole_mlp and (gelu in got['gelu'][0])
    assert got['cross_entropy'][0].endswith(f"chunk={model.loss_chunk_bytes}")
    calls = []
    for name in ('gelu', 'gelu_mlp', 'linear_cross_entropy'):
        monkeypatch.setattr(kernels, name, lambda *a, name=name, **kw: calls.append((name, kw.get('backend'))))
    for op, (shapes, make, fn) in got.items():
        fn('triton')(*make())
    assert calls == [('gelu_mlp' if whole_mlp else 'gelu', 'triton'), ('linear_cross_entropy', 'triton')]


def test_no_triton_here_measures_nothing(monkeypatch):
    monkeypatch.setattr(kernels.backend, 'INTERPRET', False)  # a plain CPU: nothing measured, no GPU times
    cfg = tiny()
    measured, timings = choose.measure(cfg, 2, torch.float32, 'cpu', False, cache_path=None)
    assert measured == dict.fromkeys(('layer_norm', 'gelu', 'attention', 'cross_entropy'), 'torch')
    assert all(r['why'] and r['torch_ms'] is None for r in timings.values())
    assert choose.resolve('auto', cfg, 'cpu', measured=measured) == dict.fromkeys(choose.ARCH_OPS['gpt2'], 'torch')
