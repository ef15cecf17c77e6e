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
from conftest import DTYPES, assert_close_3way, dtype_id

CUDA = torch.cuda.is_available()
PER_PROGRAM = adamw_module.BLOCK
CASES = [[(37, 19), (5,), (1,), (3 * PER_PROGRAM + 7,)], [(2 * PER_PROGRAM,)], [(1, 1)]] + (
    [[(50304, 768), (2304, 768), (768,), (3072, 768)]] if CUDA else [])
case_id = lambda c: "+".join("x".join(map(str, s)) for s in c)
HYPER = dict(lr=3e-3, beta1=0.9, beta2=0.95, eps=1e-8)
# GPT-2's (nanoGPT's) betas, torch's default beta2 and one nearer 1 (1 - beta2^s in fp32 keeps few digits there),
# and no momentum at all
BETAS = [(0.9, 0.95), (0.9, 0.999), (0.9, 0.9999), (0.0, 0.99)]


def group(shapes, device, dtype=torch.float32, step=0.0):
    """(weights, exp_avgs, exp_avg_sqs, step counts) of a group some steps into training; each tensor's count its own
    (step + 7 i), as torch keeps one per tensor (a weight whose first gradient came late has fewer)."""
    ws = [torch.randn(s, device=device, dtype=dtype) for s in shapes]
    ms = [torch.randn(s, device=device, dtype=dtype) * 1e-2 for s in shapes]
    vs = [torch.rand(s, device=device, dtype=dtype) * 1e-4 for s in shapes]
    steps = [torch.full((), step + 7 * i, device=device) for i in range(len(shapes))]
    return ws, ms, vs, steps


def ulp(w):
    """One unit in the last place of fp32 at w's scale."""
    return torch.finfo(torch.float32).eps * w.abs().max().item()


def copied(tensors, dtype=None, device=None):
    return [t.to(device=device or t.device, dtype=dtype or t.dtype, copy=True) for t in tensors]


def run_steps(state, grads, backend, weight_decay, dtype=None, device=None, **kw):
    """AdamW's steps on copies of state (one step per gradient list); returns the copies."""
    ws, ms, vs, steps = (copied(ts, dtype, device) for ts in state)
    steps = [s.float() for s in steps]
    for gs in grads:
        gs = copied(gs, dtype, device)
        hyper = dict(HYPER, **kw)
        if backend == "float64":
            kernels.adamw_ref(ws, gs, ms, vs, steps, weight_decay=weight_decay, **hyper)
        else:
            kernels.adamw(ws, gs, ms, vs, steps, weight_decay=weight_decay, backend=backend, **hyper)
    return ws, ms, vs, steps


@pytest.mark.parametrize("betas", BETAS, ids=lambda b: f"betas{b[0]}-{b[1]}")
@pytest.mark.parametrize("weight_decay", [0.0, 0.1], ids=["no-wd", "wd"])
@pytest.mark.parametrize("start", [0.0, 999.0], ids=["first-steps", "later-steps"])
@pytest.mark.parametrize("shapes", CASES, ids=case_id)
def test_steps_match_reference(shapes, start, weight_decay, betas, device):
    state = group(shapes, device, step=start)
    grads = [[torch.randn(s, device=device) for s in shapes] for _ in range(3)]
    kw = dict(beta1=betas[0], beta2=betas[1])
    got = run_steps(state, grads, "triton", weight_decay, **kw)
    want = run_steps(state, grads, "torch", weight_decay, **kw)
    ref = run_steps(state, grads, "float64", weight_decay, dtype=torch.float64, device="cpu", **kw)
    for i, w in enumerate(state[0]):
        # the change, not the weight: rounding the weight itself would hide an error in the update. Each step
        # still rounds the stored weight, so the rule's unit in the last place is the weight's (fp32, at its scale)
        change = lambda ws: ws[i].double().cpu() - w.double().cpu()
        assert_close_3way(f"weight {i}", change(got[0]), change(want[0]), change(ref[0]), atol=ulp(w))
        assert_close_3way(f"exp_avg {i}", got[1][i], want[1][i], ref[1][i].to(got[1][i].device))
        assert_close_3way(f"exp_avg_sq {i}", got[2][i], want[2][i], ref[2][i].to(got[2][i].device))
        assert got[3][i].item() == want[3][i].item() == start + 7 * i + 3


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
    assert [s.item() for s in taken[3]] == [5 + 7 * i for i in range(len(shapes))]


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
    counts = {"_adamw_kernel": 0}
    kernel = adamw_module._adamw_kernel

    def run(*args, _run=kernel.run, **kwargs):
        counts["_adamw_kernel"] += 1
        return _run(*args, **kwargs)
    monkeypatch.setattr(kernel, "run", run)
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
        assert_close_3way(name, p.detach() - p0.detach(), q.detach() - p0.detach(), r.detach().to(device) - p0.double(),
                          atol=ulp(p0.detach()))
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


@pytest.mark.parametrize("option", [dict(amsgrad=True), dict(maximize=True)], ids=["amsgrad", "maximize"])
def test_options_outside_the_kernel_take_torchs_step(option, device):
    got, _ = train(kernels.AdamW, device, backend="triton", **option)
    want, _ = train(torch.optim.AdamW, device, **option)
    assert all(torch.equal(p, q) for p, q in zip(got.parameters(), want.parameters()))


def test_grad_scale_takes_torchs_step(monkeypatch, device):
    """GradScaler (fp16) hands a fused optimizer its scale as the attribute grad_scale: torch's step divides by it."""
    net, groups = model_params(device)
    opt = kernels.AdamW(groups, lr=1e-2, backend="triton")
    taken = []
    monkeypatch.setattr(torch.optim.AdamW, "step", lambda self, closure=None: taken.append(self))
    opt.grad_scale = torch.full((), 1024.0, device=device)
    opt.step()
    assert taken == [opt]


def test_found_inf_set_on_the_optimizer_skips_its_step(device):
    """train.py sets optimizer.found_inf each step (a non-finite loss or gradient) and steps without a host sync."""
    net, groups = model_params(device)
    # fused on CUDA, as configure_optimizers builds it: the step counts on the GPU, where the kernel reads them
    opt = kernels.AdamW(groups, lr=1e-2, backend="triton", **(dict(fused=True) if CUDA else {}))
    for p in net.parameters():
        p.grad = torch.randn_like(p)
    opt.step()  # the state made
    before = [p.detach().clone() for p in net.parameters()]
    opt.found_inf = torch.ones((), device=device)
    opt.step()
    assert all(torch.equal(p, q) for p, q in zip(net.parameters(), before))
    assert all(s["step"].item() == 1 for s in opt.state.values())
    opt.found_inf = torch.zeros((), device=device)
    opt.step()
    assert not any(torch.equal(p, q) for p, q in zip(net.parameters(), before))
    assert all(s["step"].item() == 2 for s in opt.state.values())


def test_complex_weights_take_torchs_step(device):
    torch.manual_seed(0)
    ws = [torch.randn(5, 3, dtype=torch.complex64, device=device) for _ in range(2)]
    got, want = [torch.nn.Parameter(w.clone()) for w in ws], [torch.nn.Parameter(w.clone()) for w in ws]
    opt, ref = kernels.AdamW(got, lr=1e-2, backend="triton"), torch.optim.AdamW(want, lr=1e-2)
    for _ in range(2):
        grads = [torch.randn_like(w) for w in ws]
        for ps, o in ((got, opt), (want, ref)):
            for p, g in zip(ps, grads):
                p.grad = g.clone()
            o.step()
    assert all(torch.equal(p, q) for p, q in zip(got, want))


def test_found_inf_skips_torchs_step_too(device):
    """backend='torch' (and what the kernel cannot take) skips on found_inf as the kernel does."""
    state = group(CASES[0], device, step=4.0)
    grads = [[torch.randn(s, device=device) for s in CASES[0]]]
    skipped = run_steps(state, grads, "torch", 0.1, found_inf=torch.ones((), device=device))
    for before, after in zip(state, skipped):
        assert all(torch.equal(a, b) for a, b in zip(before, after))


def test_a_table_made_while_a_graph_is_recorded_stays_out_of_the_cache(monkeypatch):
    """Such a table holds nothing until the graph is replayed: kept (with its pinned source) for the graph's owner,
    never handed to a call outside the recording."""
    from kernels import backend
    rows = [[11, 12, 13]]
    monkeypatch.setattr(backend, "_capturing", lambda device: True)
    recorded = backend.device_table(rows, torch.device("cpu"))
    monkeypatch.setattr(backend, "_capturing", lambda device: False)
    eager = backend.device_table(rows, torch.device("cpu"))
    assert eager is not recorded and eager.tolist() == rows
    held = [table for _, table in backend.device_tables()]
    assert any(t is recorded for t in held) and any(t is eager for t in held)


@pytest.mark.skipif(not CUDA, reason="CUDA weights")
def test_capturable_keeps_the_step_counts_on_the_gpu():
    net, groups = model_params("cuda")
    opt = kernels.AdamW(groups, lr=1e-2, capturable=True, backend="triton")
    for p in net.parameters():
        p.grad = torch.randn_like(p)
    opt.step()
    assert all(s["step"].is_cuda for s in opt.state.values())


@pytest.mark.skipif(not CUDA, reason="CUDA weights")
def test_cuda_weights_with_step_counts_on_the_cpu_take_torchs_foreach_step():
    """torch.optim.AdamW on CUDA without fused or capturable keeps its step counts on the CPU: the kernel cannot
    read them, and torch's fused kernel cannot either; its foreach step can."""
    got, opt = train(kernels.AdamW, "cuda", backend="auto")
    want, _ = train(torch.optim.AdamW, "cuda", foreach=True)
    assert all(s["step"].device.type == "cpu" for s in opt.state.values())
    assert all(torch.equal(p, q) for p, q in zip(got.parameters(), want.parameters()))


@pytest.mark.skipif(not CUDA, reason="CUDA graphs")
def test_replayed_from_a_cuda_graph():
    """Recorded once and replayed, with the learning rate a tensor set between replays: the same weights and step
    counts as the steps launched one by one. The gradients are made inside the step, so the recording meets
    addresses it has not seen: its address table is made during the capture and filled at each replay."""
    from step_graph import set_lr
    results = []
    for graphed in (False, True):
        net, groups = model_params("cuda")
        grads = [torch.randn_like(p) for p in net.parameters()]
        opt = kernels.AdamW(groups, lr=torch.tensor(1e-2, device="cuda"), betas=(0.9, 0.95), fused=True,
                            capturable=True, backend="triton")

        def step():
            for p, g in zip(net.parameters(), grads):
                p.grad = g * 1.0  # a new tensor: inside the recording, at an address of the graph's pool
            opt.step()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            step()  # the state made before any recording
        torch.cuda.current_stream().wait_stream(side)
        if graphed:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
            tables = kernels.device_tables()  # held, as StepGraph holds them
            step = graph.replay
        for lr in (1e-2, 5e-3, 1e-3):
            for g in opt.param_groups:
                set_lr(g, lr)
            step()
        torch.cuda.synchronize()
        results.append([p.detach().clone() for p in net.parameters()] + [s["step"].clone() for s in opt.state.values()])
    assert all(torch.equal(a, b) for a, b in zip(*results))
    assert tables


def test_device_table_made_once_per_key():
    """The per-program table follows from the tensors' sizes alone: made for a new key only, then the same tensor."""
    from kernels.backend import device_table
    made = []
    rows = lambda: made.append(1) or [[1, 2], [3, 4]]
    a = device_table(rows, torch.device("cpu"), key=("test table", 1))
    b = device_table(rows, torch.device("cpu"), key=("test table", 1))
    c = device_table(rows, torch.device("cpu"), key=("test table", 2))
    assert a is b and a is not c and len(made) == 2 and a.tolist() == [[1, 2], [3, 4]]
    assert device_table([[5, 6]], torch.device("cpu")) is device_table([[5, 6]], torch.device("cpu"))
    as_float = device_table([[5, 6]], torch.device("cpu"), dtype=torch.float64)  # equal rows, another table
    assert as_float.dtype == torch.float64 and as_float is not device_table([[5, 6]], torch.device("cpu"))


@pytest.mark.parametrize("betas", BETAS, ids=lambda b: f"betas{b[0]}-{b[1]}")
def test_moments_are_rounded_once_from_fp64(betas, device):
    """exp_avg and exp_avg_sq within half an fp32 unit of their update in fp64: one rounding, the closest fp32 holds
    (the 2^-20 is for the fp64 sums' own rounding, which the GPU contracts into FMAs and the CPU does not). fp32
    arithmetic rounds two or three times a step and is past it in many elements."""
    ws, ms, vs, steps = group(CASES[0], device, step=3.0)
    gs = [torch.randn_like(w) for w in ws]
    beta1, beta2 = betas
    want_m = [beta1 * m.double().cpu() + (1 - beta1) * g.double().cpu() for m, g in zip(ms, gs)]
    want_v = [beta2 * v.double().cpu() + (1 - beta2) * g.double().cpu() ** 2 for v, g in zip(vs, gs)]
    kernels.adamw(ws, gs, ms, vs, steps, weight_decay=0.1, backend="triton", **dict(HYPER, beta1=beta1, beta2=beta2))
    for got, want in zip(ms + vs, want_m + want_v):
        half_unit = torch.ldexp(torch.ones_like(want), torch.frexp(want).exponent - 25)  # fp32's unit is 2^(e - 24)
        assert ((got.double().cpu() - want).abs() <= half_unit * (1 + 2**-20)).all()


def test_betas_outside_0_1_go_to_torch(device):
    """The kernel makes beta^s from log2(beta): a negative beta (which torch.optim.AdamW refuses, its functional step
    not) is torch's to step."""
    state = group(CASES[0], device, step=1.0)
    grads = [[torch.randn(s, device=device) for s in CASES[0]]]
    with pytest.raises(RuntimeError, match="betas outside"):
        run_steps(state, grads, "triton", 0.1, beta1=-0.5)
    got, want = run_steps(state, grads, "auto", 0.1, beta1=-0.5), run_steps(state, grads, "torch", 0.1, beta1=-0.5)
    assert all(torch.equal(a, b) for a, b in zip(got[0], want[0]))


@pytest.mark.parametrize("copy_dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_copies_are_the_new_weights_cast(backend, copy_dtype, device):
    """copies (kernels/linear.py's matmul_copy): each given one holds its new weight cast to its dtype bit for bit
    (rounded to nearest even) after the step, by the kernel or after torch's step; a weight given None has none
    written, a skipped step (found_inf) leaves them as they were, and a copy of another shape, device or dtype is
    refused."""
    shapes = CASES[0]
    ws, ms, vs, steps = group(shapes, device)
    gs = [torch.randn(s, device=device) for s in shapes]
    copies = [None if i == 1 else torch.zeros(s, device=device, dtype=copy_dtype) for i, s in enumerate(shapes)]
    kernels.adamw(ws, gs, ms, vs, steps, weight_decay=0.1, copies=copies, backend=backend, **HYPER)
    assert all(c is None or torch.equal(c, w.to(copy_dtype)) for w, c in zip(ws, copies))
    before = copied([c for c in copies if c is not None])
    kernels.adamw(ws, gs, ms, vs, steps, weight_decay=0.1, copies=copies, backend=backend,
                  found_inf=torch.ones((), device=device), **HYPER)
    assert all(torch.equal(a, b) for a, b in zip(before, [c for c in copies if c is not None]))
    with pytest.raises(ValueError, match="copies are contiguous bf16 or fp16"):
        kernels.adamw(ws, gs, ms, vs, steps, weight_decay=0.1, copies=[ws[0].T.to(copy_dtype)] + copies[1:],
                      backend=backend, **HYPER)


def test_the_optimizer_keeps_copies_whichever_step_runs(device):
    """kernels.AdamW writes a weight's matmul_copy at each step, its own or torch's (amsgrad takes torch's)."""
    for option in ({}, dict(amsgrad=True)):
        net, groups = model_params(device)
        for p in net.parameters():
            p.matmul_copy = p.detach().to(torch.bfloat16)
            p.grad = torch.randn_like(p)
        kernels.AdamW(groups, lr=1e-2, backend="auto", **option, **(dict(fused=True) if CUDA else {})).step()
        assert all(torch.equal(p.matmul_copy, p.detach().to(torch.bfloat16)) for p in net.parameters())
