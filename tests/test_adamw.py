"""
Tests of kernels/adamw.py, AdamW's step over a group's tensors in one launch, and kernels.AdamW, the optimizer
that takes it. Three-way against torch's own AdamW in fp32 (fused on the GPU, foreach on the CPU) and the same
step in float64, over several steps (the bias corrections move), with and without weight decay, over groups of
odd shapes (one element, not powers of two, many programs per tensor); GPT-2's shapes on the GPU. bf16 and fp16
weights are not the kernel's: 'triton' refuses them, 'auto' gives them torch's step.
"""
import importlib

import pytest
import torch

import kernels
adamw_module = importlib.import_module("kernels.adamw")  # (kernels.adamw is the op)
from conftest import DTYPES, assert_close_3way, count_launches, dtype_id

CUDA = torch.cuda.is_available()
PER_PROGRAM = adamw_module.BLOCK
CASES = [[(37, 19), (5,), (1,), (3 * PER_PROGRAM + 7,)], [(2 * PER_PROGRAM,)], [(1, 1)]] + (
    [[(50304, 768), (2304, 768), (768,), (3072, 768)]] if CUDA else [])
case_id = lambda c: "+".join("x".join(map(str, s)) for s in c)
HYPER = dict(lr=3e-3, beta1=0.9, beta2=0.95, eps=1e-8)


def group(shapes, device, dtype=torch.float32, step=0.0):
    """(weights, exp_avgs, exp_avg_sqs, step counts) of a group some steps into training."""
    ws = [torch.randn(s, device=device, dtype=dtype) for s in shapes]
    ms = [torch.randn(s, device=device, dtype=dtype) * 1e-2 for s in shapes]
    vs = [torch.rand(s, device=device, dtype=dtype) * 1e-4 for s in shapes]
    steps = [torch.full((), step, device=device) for _ in shapes]
    return ws, ms, vs, steps


def copied(tensors, dtype=None, device=None):
    return [t.to(device=device or t.device, dtype=dtype or t.dtype, copy=True) for t in tensors]


def run_steps(state, grads, backend, weight_decay, dtype=None, device=None, **kw):
    """AdamW's steps on copies of state (one step per gradient list); returns the copies."""
    ws, ms, vs, steps = (copied(ts, dtype, device) for ts in state)
    steps = [s.float() for s in steps]
    for gs in grads:
        gs = copied(gs, dtype, device)
        if backend == "float64":
            kernels.adamw_ref(ws, gs, ms, vs, steps, weight_decay=weight_decay, **HYPER, **kw)
        else:
            kernels.adamw(ws, gs, ms, vs, steps, weight_decay=weight_decay, **HYPER, backend=backend, **kw)
    return ws, ms, vs, steps


@pytest.mark.parametrize("weight_decay", [0.0, 0.1], ids=["no-wd", "wd"])
@pytest.mark.parametrize("start", [0.0, 999.0], ids=["first-steps", "later-steps"])
@pytest.mark.parametrize("shapes", CASES, ids=case_id)
def test_steps_match_reference(shapes, start, weight_decay, device):
    state = group(shapes, device, step=start)
    grads = [[torch.randn(s, device=device) for s in shapes] for _ in range(3)]
    got = run_steps(state, grads, "triton", weight_decay)
    want = run_steps(state, grads, "torch", weight_decay)
    ref = run_steps(state, grads, "float64", weight_decay, dtype=torch.float64, device="cpu")
    for i, w in enumerate(state[0]):
        # the change, not the weight: rounding the weight itself would hide an error in the update
        change = lambda ws: ws[i].double().cpu() - w.double().cpu()
        assert_close_3way(f"weight {i}", change(got[0]), change(want[0]), change(ref[0]))
        assert_close_3way(f"exp_avg {i}", got[1][i], want[1][i], ref[1][i].to(got[1][i].device))
        assert_close_3way(f"exp_avg_sq {i}", got[2][i], want[2][i], ref[2][i].to(got[2][i].device))
        assert got[3][i].item() == want[3][i].item() == start + 3


def test_found_inf_skips_the_step_and_its_count(device):
    shapes = CASES[0]
    state = group(shapes, device, step=4.0)
    grads = [[torch.randn(s, device=device) for s in shapes]]
    skipped = run_steps(state, grads, "triton", 0.1, found_inf=torch.ones((), device=device))
    for before, after in zip(state, skipped):
        assert all(torch.equal(a, b) for a, b in zip(before, after))
    taken = run_steps(state, grads, "triton", 0.1, found_inf=torch.zeros((), device=device))
    plain = run_steps(state, grads, "triton", 0.1)
    for a, b in zip(taken, plain):
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert taken[3][0].item() == 5


def test_lr_as_a_device_tensor(device):
    """A CUDA graph's optimizer reads its learning rate from a 0-d tensor (step_graph.set_lr)."""
    shapes = CASES[0]
    state = group(shapes, device, step=2.0)
    grads = [[torch.randn(s, device=device) for s in shapes]]
    as_float = run_steps(state, grads, "triton", 0.1)
    ws, ms, vs, steps = (copied(ts) for ts in state)
    kernels.adamw(ws, copied(grads[0]), ms, vs, steps, weight_decay=0.1, backend="triton",
                  **dict(HYPER, lr=torch.tensor(HYPER["lr"], device=device)))
    assert all(torch.equal(a, b) for a, b in zip(ws, as_float[0]))


def test_one_launch_per_group(monkeypatch, device):
    counts = count_launches(monkeypatch, adamw_module)
    run_steps(group(CASES[0], device), [[torch.randn(s, device=device) for s in CASES[0]]] * 2, "triton", 0.1)
    assert counts == {"_adamw_kernel": 2}
    run_steps(group(CASES[0], device), [[torch.randn(s, device=device) for s in CASES[0]]], "torch", 0.1)
    assert counts == {"_adamw_kernel": 2}


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != torch.float32], ids=dtype_id)
def test_other_dtypes_are_refused_or_go_to_torch(dtype, device):
    shapes = CASES[0]
    state = group(shapes, device, dtype=dtype, step=1.0)
    grads = [[torch.randn(s, device=device, dtype=dtype) for s in shapes]]
    with pytest.raises(RuntimeError, match="contiguous fp32"):
        run_steps(state, grads, "triton", 0.1)
    got, want = run_steps(state, grads, "auto", 0.1), run_steps(state, grads, "torch", 0.1)
    assert all(torch.equal(a, b) for a, b in zip(got[0], want[0]))


def model_params(device):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.GELU(), torch.nn.Linear(40, 3)).to(device)
    return net, [dict(params=[p for p in net.parameters() if p.dim() == 2], weight_decay=0.1),
                 dict(params=[p for p in net.parameters() if p.dim() < 2], weight_decay=0.0)]


def train(optimizer_class, device, steps=3, state_dict=None, dtype=torch.float32, first_batch=0, **kw):
    """The net after `steps` optimizer steps on a fixed sequence of batches from first_batch on; with state_dict,
    resumed from it first."""
    net, groups = model_params(device)
    net = net.to(dtype)
    opt = optimizer_class(groups, lr=1e-2, betas=(0.9, 0.95), **kw)
    if state_dict is not None:
        net.load_state_dict(state_dict[0])
        opt.load_state_dict(state_dict[1])
    gen = torch.Generator().manual_seed(1)
    for i in range(first_batch + steps):
        x, y = torch.randn(16, 24, generator=gen), torch.randn(16, 3, generator=gen)
        if i < first_batch:
            continue
        loss = torch.nn.functional.mse_loss(net(x.to(device, dtype)), y.to(device, dtype))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return net, opt


def test_optimizer_matches_torch_adamw(device):
    fused = dict(fused=True) if CUDA else {}
    got, opt = train(kernels.AdamW, device, backend="triton", **fused)
    want, _ = train(torch.optim.AdamW, device, **fused)
    ref, _ = train(torch.optim.AdamW, "cpu", dtype=torch.float64)
    start, _ = train(torch.optim.AdamW, device, steps=0)
    for (name, p), q, r, p0 in zip(got.named_parameters(), want.parameters(), ref.parameters(), start.parameters()):
        assert_close_3way(name, p.detach() - p0.detach(), q.detach() - p0.detach(), r.detach().to(device) - p0.double())
    assert all(s["step"].item() == 3 for s in opt.state.values())


def test_state_dict_goes_both_ways(device):
    """A run started with one optimizer resumes with the other: the same state, the same keys."""
    fused = dict(fused=True) if CUDA else {}
    for first, second in ((kernels.AdamW, torch.optim.AdamW), (torch.optim.AdamW, kernels.AdamW)):
        net, opt = train(first, device, **fused)
        saved = (net.state_dict(), opt.state_dict())
        resumed, _ = train(second, device, steps=2, state_dict=saved, first_batch=3, **fused)
        straight, _ = train(first, device, steps=5, **fused)
        for p, q in zip(resumed.parameters(), straight.parameters()):
            torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


def test_amsgrad_takes_torchs_step(device):
    got, _ = train(kernels.AdamW, device, amsgrad=True)
    want, _ = train(torch.optim.AdamW, device, amsgrad=True)
    assert all(torch.equal(p, q) for p, q in zip(got.parameters(), want.parameters()))


@pytest.mark.skipif(not CUDA, reason="CUDA graphs")
def test_replayed_from_a_cuda_graph():
    """Recorded once and replayed, with the learning rate a tensor set between replays: the same weights as the
    steps launched one by one."""
    from step_graph import set_lr
    results = []
    for graphed in (False, True):
        net, groups = model_params("cuda")
        opt = kernels.AdamW(groups, lr=torch.tensor(1e-2, device="cuda"), betas=(0.9, 0.95), fused=True,
                            capturable=True, backend="triton")
        for p in net.parameters():
            p.grad = torch.randn_like(p)
        step = opt.step
        if graphed:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                opt.step()  # the state made before the recording
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                opt.step()
            step = graph.replay
        else:
            opt.step()
        for lr in (1e-2, 5e-3, 1e-3):  # (the recording ran nothing: these are the steps after the first)
            for g in opt.param_groups:
                set_lr(g, lr)
            step()
        torch.cuda.synchronize()
        results.append([p.detach().clone() for p in net.parameters()] + [s["step"].clone() for s in opt.state.values()])
    assert all(torch.equal(a, b) for a, b in zip(*results))
