"""
Tests of kernels/choose.py, kernels='auto' by measurement: PyTorch everywhere where Triton
cannot run (nothing measured), the cache (a hit measures nothing; another shape, dtype or
library version measures again), a real measurement of two ops (they agree, both timed),
a wrong kernel losing, the mapping onto the model's per-op overrides, and memory deciding
first where recompute asks for it.
"""
import json

import pytest
import torch

import kernels
import kernels.choose as choose
from model import GPTConfig, measure_kernels


def tiny():
    """The smallest GPT these tests build."""
    return GPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=8, vocab_size=65)


def fake_measure(calls):
    def measure(make, fn, compile, backward, graphed=False):
        calls.append((fn, backward))
        return dict(impl='triton', triton_ms=1.0, torch_ms=2.0, triton_gpu_ms=3.0, torch_gpu_ms=4.0, why=None,
                    failed=False)
    return measure


def cases(B=2, dtype=torch.float32, ops=('layer_norm', 'gelu')):
    return choose.op_cases(ops, B, 8, 16, 2, None, 65, 64, True, dtype, 'cpu')


def test_no_triton_here_means_pytorch_and_no_measurement(monkeypatch):
    monkeypatch.setattr(kernels.backend, 'INTERPRET', False)
    calls = []
    monkeypatch.setattr(choose, 'measure', fake_measure(calls))
    got = choose.choose(cases(), torch.float32, False, 'cpu', None)
    assert calls == [] and {r['impl'] for r in got.values()} == {'torch'}
    assert got['gelu']['why'] == "tensors on cpu need CUDA (or TRITON_INTERPRET=1)" and not got['gelu']['failed']


def test_cache_hit_measures_nothing_and_changes_measure_again(tmp_path, monkeypatch):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)  # as on a GPU
    path, calls = str(tmp_path / 'cache.json'), []
    monkeypatch.setattr(choose, 'measure', fake_measure(calls))
    first = choose.choose(cases(), torch.float32, False, 'cpu', path)
    assert len(calls) == 2 and first['gelu']['triton_ms'] == 1.0
    assert len(json.load(open(path))) == 2
    assert choose.choose(cases(), torch.float32, False, 'cpu', path) == first and len(calls) == 2
    choose.choose(cases(B=3), torch.float32, False, 'cpu', path)  # other shapes
    assert len(calls) == 4
    choose.choose(cases(), torch.bfloat16, False, 'cpu', path)  # other dtype
    choose.choose(cases(), torch.float32, True, 'cpu', path)  # compiled
    assert len(calls) == 8
    choose.choose(cases(), torch.float32, False, 'cpu', path, graphed=True)  # the whole step in a CUDA graph
    assert len(calls) == 10
    monkeypatch.setattr(torch, '__version__', '0.0.0')  # another PyTorch
    choose.choose(cases(), torch.float32, False, 'cpu', path)
    assert len(calls) == 12
    choose.choose(cases(), torch.float32, False, 'cpu', None)  # no cache: always measured
    assert len(calls) == 14 and len(json.load(open(path))) == 12


@pytest.mark.parametrize("op, dtype", [("layer_norm", torch.float32), ("swiglu", torch.float32),
                                       ("rotary", torch.float32), ("cross_entropy", torch.bfloat16)])
def test_real_measurement_agrees_and_times_both(op, dtype, device):
    shapes, make, fn = choose.op_cases([op], 2, 8, 16, 2, None, 65, 64, True, dtype, device)[op]
    r = choose.measure(make, fn, compile=False, reps=2)
    assert r['why'] is None and r['impl'] in ('triton', 'torch') and r['triton_ms'] > 0 and r['torch_ms'] > 0
    peaks = r['triton_peak_mib'], r['torch_peak_mib']
    assert peaks == (None, None) if device == 'cpu' else min(peaks) > 0


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
    shapes, make, fn = choose.op_cases(['gelu'], 2, 8, 16, 2, None, 65, 64, True, torch.float32, device)['gelu']
    wrong = lambda be: (lambda h, b: fn(be)(h, b) * (1.5 if be == 'triton' else 1.0))
    r = choose.measure(make, wrong, compile=False, reps=2)
    assert r['impl'] == 'torch' and r['triton_ms'] is None and r['why'].startswith("Triton off by") and r['failed']


def test_measured_choices_become_the_models_overrides(monkeypatch, tmp_path):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)
    monkeypatch.setattr(choose, 'measure', fake_measure([]))
    cfg = GPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=8, vocab_size=65, dropout=0.1)
    overrides, timings = measure_kernels(cfg, 2, torch.float32, 'cpu', False, None)
    assert set(timings) == {'layer_norm', 'gelu', 'cross_entropy'}  # attention with dropout: SDPA only
    assert overrides == dict(layer_norm=True, mlp=True, cross_entropy=True)


def test_the_users_overrides_win_and_are_not_measured(monkeypatch, capsys):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)
    calls = []
    monkeypatch.setattr(choose, 'measure', fake_measure(calls))
    cfg = GPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=8, vocab_size=65, arch='llama')
    overrides, timings = measure_kernels(cfg, 2, torch.float32, 'cpu', False, None,
                                         overrides=dict(rms_norm=False, rotary=None, attention=True))
    assert set(timings) == {'rotary', 'swiglu', 'cross_entropy'} and len(calls) == 3
    assert overrides == dict(rms_norm=False, rotary=True, mlp=True, attention=True, cross_entropy=True)
    assert ("  swiglu: triton (per call in a loop: Triton 1.000 ms, PyTorch 2.000 ms; GPU time alone: 3.000 ms, "
            "4.000 ms)") in capsys.readouterr().out
    # sampling: forward only, and no loss to measure
    overrides, timings = measure_kernels(cfg, 1, torch.float32, 'cpu', False, None, backward=False)
    assert set(timings) == {'rms_norm', 'rotary', 'swiglu', 'attention'} and {b for _, b in calls[3:]} == {False}


def test_bf16_ops_are_measured_under_autocast_as_the_model_runs_them(device):
    # the model's LayerNorm gets bf16 activations and fp32 weights; only autocast makes
    # PyTorch's eager LayerNorm take them on CUDA
    got = choose.choose(choose.op_cases(['layer_norm'], 2, 8, 16, 2, None, 65, 64, True, torch.bfloat16, device),
                        torch.bfloat16, False, device, None)
    assert got['layer_norm']['why'] is None and got['layer_norm']['torch_ms'] > 0


@pytest.mark.parametrize("compile, graphed, winner", [(False, False, 'triton'), (True, False, 'torch'),
                                                      (False, True, 'torch'), (True, True, 'torch')])
def test_eager_decides_on_the_loop_time_compiled_or_graphed_on_gpu_time(monkeypatch, compile, graphed, winner, device):
    # Triton: 1 ms per call in a loop, 5 ms of GPU time; PyTorch: 2 ms and 3 ms
    times, as_step_graph = iter([(2.0, 3.0), (1.0, 5.0)]), []  # measure times PyTorch first
    monkeypatch.setattr(choose, '_times', lambda f, inputs, backward, reps, graphed: as_step_graph.append(graphed) or next(times))
    monkeypatch.setattr(torch, 'compile', lambda f: f)  # the decision, not the compiler
    shapes, make, fn = choose.op_cases(['gelu'], 2, 8, 16, 2, None, 65, 64, True, torch.float32, device)['gelu']
    r = choose.measure(make, fn, compile, graphed=graphed)
    assert r['impl'] == winner and (r['triton_ms'], r['triton_gpu_ms'], r['torch_ms'], r['torch_gpu_ms']) == (1, 5, 2, 3)
    assert as_step_graph == [graphed, graphed]  # a graphed step's ops timed as StepGraph records them


def test_a_kernel_that_fails_here_leaves_its_op_to_pytorch_with_a_warning(monkeypatch, capsys, device):
    import triton
    import kernels.norm as norm

    def cannot_launch(*args, **kwargs):
        raise triton.runtime.errors.OutOfResources(300000, 232448, 'shared memory')
    monkeypatch.setattr(norm._norm_fwd_kernel, 'run', cannot_launch)
    monkeypatch.setattr(kernels.backend, '_lean', {})  # no compiled kernel kept by an earlier test's eager launch
    cfg = tiny()
    overrides, timings = measure_kernels(cfg, 2, torch.float32, device, False, None,
                                         overrides=dict(mlp=False, attention=False, cross_entropy=False))
    assert overrides['layer_norm'] is False and timings['layer_norm']['why'].startswith("Triton failed: OutOfResources")
    assert timings['layer_norm']['failed']
    assert "  WARNING: layer_norm: torch" in capsys.readouterr().out
    from model import GPT
    idx = torch.randint(65, (2, 8), device=device)
    GPT(cfg, overrides=overrides).to(device)(idx, idx)  # 'auto' with the measured choice runs
    with pytest.raises(triton.runtime.errors.OutOfResources):  # kernels='triton' does not hide the failure
        GPT(cfg, kernels='triton').to(device)(idx, idx)


def op_result(loop_wins, gpu_wins):
    """One op's measurement: Triton faster per call in a loop or not, on the GPU or not."""
    return dict(impl='triton' if loop_wins else 'torch', triton_ms=1.0 if loop_wins else 3.0, torch_ms=2.0,
                triton_gpu_ms=1.0 if gpu_wins else 3.0, torch_gpu_ms=2.0, why=None, failed=False)


@pytest.fixture
def disagreeing(monkeypatch):
    """measure_kernels' per-op results (returned, to change) where LayerNorm wins on the GPU but not per call."""
    results = {'layer_norm': op_result(False, True), 'gelu': op_result(True, True), 'attention': op_result(False, False),
               'cross_entropy': op_result(True, True)}
    monkeypatch.setattr(choose, 'choose', lambda cases, *args, **kwargs: {op: results[op] for op in cases})
    return results


@pytest.mark.parametrize("by_gpu_faster", [True, False])
def test_an_eager_step_is_timed_whole_where_loop_and_gpu_times_disagree(monkeypatch, tmp_path, capsys, by_gpu_faster,
                                                                      disagreeing):
    import model
    timed = []

    def step_ms(config, batch_size, dtype, device, overrides, model_args):
        timed.append((dict(overrides), model_args))
        return 10.0 if overrides['layer_norm'] == by_gpu_faster else 12.0
    monkeypatch.setattr(model, '_eager_step_ms', step_ms)
    cfg, path = tiny(), str(tmp_path / 'cache.json')
    per_call = dict(layer_norm=False, mlp=True, attention=False, cross_entropy=True)
    want = dict(per_call, layer_norm=True) if by_gpu_faster else per_call
    args = (cfg, 2, torch.bfloat16, 'cpu', False, path)
    assert measure_kernels(*args, model_args=dict(autocast_residual=True))[0] == want
    assert [o for o, _ in timed] == [dict(per_call, layer_norm=True), per_call]
    assert all(a == dict(autocast_residual=True) for _, a in timed)
    times = "10.00 ms, for gelu, cross_entropy (per call) 12.00 ms: the first" if by_gpu_faster else \
        "12.00 ms, for gelu, cross_entropy (per call) 10.00 ms: the second"
    assert f"with Triton for layer_norm, gelu, cross_entropy (the ops' GPU time) {times}" in capsys.readouterr().out
    assert measure_kernels(*args, model_args=dict(autocast_residual=True))[0] == want and len(timed) == 2  # cached
    measure_kernels(*args, model_args=dict(autocast_residual=False))  # another model: timed again
    assert len(timed) == 4
    measure_kernels(cfg, 2, torch.bfloat16, 'cpu', True, path)  # compiled, graphed, sampling: GPU time or per call as before
    measure_kernels(cfg, 2, torch.bfloat16, 'cpu', False, path, graphed=True)
    measure_kernels(cfg, 1, torch.bfloat16, 'cpu', False, path, backward=False)
    disagreeing['layer_norm'] = op_result(False, False)  # the two choices agree: nothing to time
    assert measure_kernels(cfg, 3, torch.bfloat16, 'cpu', False, path)[0] == per_call and len(timed) == 4


@pytest.mark.parametrize("layer_norm", [True, False])
def test_the_eager_step_timing_runs_the_model_it_is_given(monkeypatch, device, layer_norm):
    import model
    import kernels.norm
    from conftest import count_launches
    launches = count_launches(monkeypatch, kernels.norm)
    cfg = tiny()
    ms = model._eager_step_ms(cfg, 2, torch.float32, device, dict(layer_norm=layer_norm, mlp=False, attention=False,
                                                                   cross_entropy=True), {})
    # forward + backward of 3 norms per step, 3 warm-up and 15 timed steps
    assert ms > 0 and launches == ({'_norm_fwd_kernel': 54, '_norm_bwd_kernel': 54} if layer_norm else
                                   {'_norm_fwd_kernel': 0, '_norm_bwd_kernel': 0})




def test_the_users_choices_are_part_of_the_eager_steps_key(monkeypatch, tmp_path, disagreeing):
    import model
    timed = []
    monkeypatch.setattr(model, '_eager_step_ms', lambda *args: timed.append(args[4]) or 1.0 + len(timed))
    path = str(tmp_path / 'cache.json')
    for attention in (True, False, True):
        measure_kernels(tiny(), 2, torch.bfloat16, 'cpu', False, path, overrides=dict(attention=attention))
    assert [t['attention'] for t in timed] == [True, True, False, False]  # the third run found its own entry


def test_whatever_stops_the_eager_step_timing_leaves_the_per_call_choice(monkeypatch, tmp_path, capsys, disagreeing):
    import model

    def cannot(*args):
        torch.rand(1)  # the random numbers it takes are not the run's
        raise ValueError("the Triton attention has no dropout")
    monkeypatch.setattr(model, '_eager_step_ms', cannot)
    path, state = str(tmp_path / 'cache.json'), torch.random.get_rng_state()
    overrides, _ = measure_kernels(tiny(), 2, torch.bfloat16, 'cpu', False, path)
    assert overrides == dict(layer_norm=False, mlp=True, attention=False, cross_entropy=True)
    assert "the eager step could not be timed (ValueError: the Triton attention has no dropout)" in capsys.readouterr().out
    assert torch.equal(torch.random.get_rng_state(), state) and choose.load_cache(path) == {}


def measured(triton_faster, triton_peak, torch_peak, failed=False):
    """measure's result: Triton faster or not (both ways), the two peaks in MiB, or a Triton that failed."""
    r = dict(op_result(triton_faster, triton_faster), triton_peak_mib=triton_peak, torch_peak_mib=torch_peak)
    return dict(r, impl='torch', triton_peak_mib=None, why='off', failed=True) if failed else r


@pytest.mark.parametrize("triton_faster, triton_peak, torch_peak, failed, winner, by_memory", [
    (False, 360.0, 1300.0, False, 'triton', True),  # the fused loss against PyTorch's logits: a tie in time
    (True, 1300.0, 360.0, False, 'torch', True),
    (True, 360.0, 1300.0, False, 'triton', False),  # time and memory agree
    (False, 256.0, 320.0, False, 'triton', True),  # 1.25x and 64 MiB: memory decides
    (False, 256.0, 319.0, False, 'torch', False),  # just under: time decides
    (True, 10.0, 60.0, False, 'triton', False),  # 6x, but only 50 MiB: time decides
    (False, 10.0, 60.0, False, 'torch', False),
    (False, None, 1300.0, False, 'torch', False),  # no peak (no GPU): time decides
    (False, 360.0, 1300.0, True, 'torch', False),  # a kernel that failed stays out
])
def test_with_memory_asked_a_far_larger_peak_loses_whatever_its_time(triton_faster, triton_peak, torch_peak, failed,
                                                                     winner, by_memory):
    got = choose.by_memory(measured(triton_faster, triton_peak, torch_peak, failed))
    assert got['impl'] == winner and got.get('by_memory', False) == by_memory


def test_the_memory_rule_applies_to_a_cached_measurement_only_where_asked(monkeypatch, tmp_path):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)  # as on a GPU
    calls = []
    monkeypatch.setattr(choose, 'measure', lambda *args, **kwargs: calls.append(1) or measured(False, 360.0, 1300.0))
    path = str(tmp_path / 'cache.json')
    impls = lambda memory: {r['impl'] for r in choose.choose(cases(), torch.float32, False, 'cpu', path,
                                                            memory=memory).values()}
    assert impls(True) == {'triton'} and impls(False) == {'torch'} and impls(True) == {'triton'}
    assert len(calls) == 2 and not any('by_memory' in r for r in choose.load_cache(path).values())  # measured once


@pytest.mark.parametrize("compile, graphed", [(True, False), (False, True), (False, False)])
def test_recompute_asks_for_memory_where_gpu_time_decides(monkeypatch, capsys, compile, graphed):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)  # as on a GPU
    monkeypatch.setattr(choose, 'measure', lambda *args, **kwargs: measured(False, 360.0, 1300.0))
    for recompute in ('none', 'activation', 'mlp'):
        overrides, _ = measure_kernels(tiny(), 2, torch.float32, 'cpu', compile, None, graphed=graphed,
                                       model_args=dict(recompute=recompute))
        # a plain eager step stays with time: its host's, which the eager step check weighs
        fused_loss = recompute != 'none' and (compile or graphed)
        assert overrides['cross_entropy'] is fused_loss and overrides['layer_norm'] is fused_loss
    line = ("  cross_entropy: triton (per call in a loop: Triton 3.000 ms, PyTorch 2.000 ms; GPU time alone: 3.000 ms, "
            "2.000 ms; peak 360 MiB, 1,300 MiB), the smaller peak, not the shorter time (recompute asks for memory)")
    assert (line in capsys.readouterr().out) == (compile or graphed)


def test_activation_recompute_takes_the_epilogue_mlp_unmeasured(monkeypatch, capsys):
    """GPT-2 with GELU's tanh form and no bias, recompute='activation', a compiled or graphed step in bf16 or fp16: the
    MLP's GELU goes into the matmuls' epilogues (LinearOfNorm, LinearOfActivation), which no case measures: Triton's,
    not measured, unless the user says. Other recompute settings, forms, biases, dtypes, a plain eager step or the
    user's PyTorch LayerNorm (no LinearOfNorm) measure it."""
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)  # as on a GPU
    measured_ops = []
    monkeypatch.setattr(choose, 'choose', lambda cases, *a: measured_ops.append(sorted(cases)) or {
        op: dict(impl='torch', triton_ms=2.0, torch_ms=1.0, triton_gpu_ms=2.0, torch_gpu_ms=1.0, why=None, failed=False)
        for op in cases})
    monkeypatch.setattr('model.eager_step_choice', lambda config, b, d, dev, cache, overrides, *a: overrides)
    tanh = GPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=8, vocab_size=65, bias=False, gelu_approximate='tanh')
    bf16, fp32 = torch.bfloat16, torch.float32
    for config, recompute, user, dtype, compile, taken in [
            (tanh, 'activation', {}, bf16, True, True), (tanh, 'activation', {}, torch.float16, False, True),
            (tanh, 'activation', dict(mlp=False), bf16, True, False), (tanh, 'none', {}, bf16, True, False),
            (tanh, 'mlp', {}, bf16, True, False), (tiny(), 'activation', {}, bf16, True, False),
            (tanh, 'activation', {}, fp32, True, False), (tanh, 'activation', dict(layer_norm=False), bf16, True, False)]:
        overrides, _ = measure_kernels(config, 2, dtype, 'cpu', compile, None, overrides=user, graphed=not compile,
                                       model_args=dict(recompute=recompute))
        assert overrides['mlp'] is taken  # (the cases measured here all go to PyTorch)
        assert ('gelu' in measured_ops[-1]) == ('mlp' not in user and not taken)
    overrides, _ = measure_kernels(tanh, 2, bf16, 'cpu', False, None, model_args=dict(recompute='activation'))
    assert overrides['mlp'] is False and 'gelu' in measured_ops[-1]  # a plain eager step: measured
    assert capsys.readouterr().out.count("gelu: triton, not measured") == 2


def test_no_triton_here_means_no_eager_step_check(monkeypatch):
    monkeypatch.setattr(kernels.backend, 'INTERPRET', False)  # a plain CPU: nothing measured, no GPU times
    cfg = tiny()
    overrides, timings = measure_kernels(cfg, 2, torch.float32, 'cpu', False, None)
    assert not any(overrides.values()) and all(r['why'] for r in timings.values())
