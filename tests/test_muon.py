"""
Tests of muon.Muon: its steps against torch.optim.Muon (Newton-Schulz in bf16), three-way
against the published algorithm written out per matrix in float64 (momentum, Nesterov,
Newton-Schulz, the shape factor, decoupled weight decay), which torch.optim.Muon is checked
to follow; its AdamW groups against torch.optim.AdamW; and the
DDP path (each rank orthogonalises a share, results all-gathered) against one process.
"""

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from conftest import assert_close_3way
from kernels.newton_schulz import newton_schulz_ref
from muon import Muon

CUDA = torch.cuda.is_available()
# square, wide, tall (stacked with the wide one of its shape), one row, a shape of its own;
# GPT-2's block matrices on the GPU
SHAPES = [(40, 40), (24, 72), (72, 24), (24, 72), (1, 50), (33, 50)] + (
    [(2304, 768), (768, 768), (3072, 768), (768, 3072)] if CUDA else [])
HYPER = dict(lr=0.02, momentum=0.95, weight_decay=0.1)


def matrices_and_grads(shapes, steps, device, dtype=torch.float32):
    """Weights and, per step, their gradients: fixed, so that the implementations see the
    same gradients whatever their weights have become."""
    g = torch.Generator().manual_seed(0)
    weights = [torch.randn(s, generator=g).to(device, dtype) for s in shapes]
    grads = [[torch.randn(s, generator=g).to(device, dtype) for s in shapes] for _ in range(steps)]
    return weights, grads


def reference_muon(weights, grads, lr, momentum, weight_decay, nesterov):
    """The published Muon, one matrix at a time, in float64."""
    weights, grads = [w.double() for w in weights], [[g.double() for g in s] for s in grads]
    bufs = [torch.zeros_like(w) for w in weights]
    for step_grads in grads:
        for w, g, buf in zip(weights, step_grads, bufs):
            buf.lerp_(g, 1 - momentum)
            u = g.lerp(buf, momentum) if nesterov else buf
            o = newton_schulz_ref(u, dtype=torch.float64)
            w.mul_(1 - lr * weight_decay)
            w.add_(o, alpha=-lr * max(1, w.size(0) / w.size(1)) ** 0.5)
    return weights


def torch_muon(weights, grads, nesterov, **hyper):
    """torch.optim.Muon's steps (its shape factor 'original': max(1, rows / cols)^0.5)."""
    if not hasattr(torch.optim, 'Muon'):
        pytest.skip(f"torch {torch.__version__} has no torch.optim.Muon (2.9 and later have)")
    params = [torch.nn.Parameter(w.clone()) for w in weights]
    opt = torch.optim.Muon(params, nesterov=nesterov, adjust_lr_fn='original', **hyper)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = g.clone()
        opt.step()
    return [p.detach() for p in params]


def our_muon(weights, grads, backend, nesterov=True, **hyper):
    params = [torch.nn.Parameter(w.clone()) for w in weights]
    opt = Muon([dict(params=params)], nesterov=nesterov, backend=backend, **hyper)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = g.clone()
        opt.step()
    return [p.detach() for p in params], opt


@pytest.mark.parametrize("backend, nesterov", [("triton", True), ("torch", True), ("torch", False)],
                         ids=["triton", "torch", "torch-no-nesterov"])
def test_steps_match_torch_muon(backend, nesterov, device):
    """Three steps: each weight's total change, ours vs torch.optim.Muon vs the published algorithm in float64;
    torch.optim.Muon's within bf16's reach of the float64 one (the other Nesterov setting is 13% or more away)."""
    weights, grads = matrices_and_grads(SHAPES, 3, device)
    ours, opt = our_muon(weights, grads, backend, nesterov, **HYPER)
    assert opt.backend == backend
    theirs = torch_muon(weights, grads, nesterov, **HYPER)
    exact = reference_muon(weights, grads, nesterov=nesterov, **HYPER)
    for i, (w, o, t, e) in enumerate(zip(weights, ours, theirs, exact)):
        name, change = f"weight {i} {tuple(w.shape)}", e - w.double()
        assert (t - w - change).abs().max() <= 0.03 * change.abs().max(), f"{name}: torch.optim.Muon differs"
        assert_close_3way(name, o - w, t - w, change)
        if backend == "torch" and device == "cpu":  # the same ops (cuBLAS may pick other kernels for a stack)
            assert torch.equal(o, t), name
        # the momentum is fp32 lerps of the same gradients: PyTorch's bits, the kernel's within an ulp or two
        buf = opt.state[opt.param_groups[0]['params'][i]]['momentum_buffer']
        want = torch.zeros_like(w)
        for s in grads:
            want.lerp_(s[i], 1 - HYPER['momentum'])
        if backend == "torch":
            assert torch.equal(buf, want)
        torch.testing.assert_close(buf, want, rtol=0, atol=4 * torch.finfo(torch.float32).eps * want.abs().max().item())


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_adamw_groups_match_torch_adamw(backend, device):
    """Embedding-like matrices and gains in muon=False groups step as torch's AdamW does: kernels.adamw within the
    three-way rule (against torch's fused kernel on CUDA, foreach elsewhere, and float64), and with backend='torch'
    torch's own step, bit for bit."""
    weights, grads = matrices_and_grads([(65, 32), (32,), (7,)], 3, device)
    hyper = dict(lr=1e-3, betas=(0.9, 0.99), eps=1e-8)
    groups = lambda ps: [dict(params=ps[:1], weight_decay=0.1), dict(params=ps[1:], weight_decay=0.0)]
    ours = [torch.nn.Parameter(w.clone()) for w in weights]
    theirs = [torch.nn.Parameter(w.clone()) for w in weights]
    exact = [torch.nn.Parameter(w.detach().cpu().double()) for w in weights]
    opt = Muon([dict(g, muon=False) for g in groups(ours)], **hyper, backend=backend)
    ref = torch.optim.AdamW(groups(theirs), **hyper, **({'fused': True} if CUDA else {'foreach': True}))
    ref64 = torch.optim.AdamW(groups(exact), **hyper, foreach=True)
    for step_grads in grads:
        for ps, o in ((ours, opt), (theirs, ref), (exact, ref64)):
            for p, g in zip(ps, step_grads):
                p.grad = g.to(p.device, p.dtype, copy=True)
            o.step()
    for i, (o, t, e, w) in enumerate(zip(ours, theirs, exact, weights)):
        if backend == "torch":
            torch.testing.assert_close(o, t, rtol=0, atol=0)
        assert_close_3way(f"weight {i}", (o - w).detach(), (t - w).detach(), e.detach().to(w.device) - w.double())


def test_state_dict_round_trip(device):
    """A checkpointed optimizer continues as the original does, Muon and AdamW state alike."""
    weights, grads = matrices_and_grads([(24, 72), (72, 24), (16,)], 4, device)

    def make(ws):
        ps = [torch.nn.Parameter(w.clone()) for w in ws]
        return ps, Muon([dict(params=ps[:2]), dict(params=ps[2:], muon=False, lr=1e-3, weight_decay=0.0)],
                        backend="torch")

    def step(ps, opt, step_grads):
        for p, g in zip(ps, step_grads):
            p.grad = g.clone()
        opt.step()

    ps, opt = make(weights)
    for s in grads:
        step(ps, opt, s)
    resumed, opt2 = make(weights)
    ps_half, opt_half = make(weights)
    for s in grads[:2]:
        step(ps_half, opt_half, s)
    with torch.no_grad():
        for r, h in zip(resumed, ps_half):
            r.copy_(h)
    opt2.load_state_dict(opt_half.state_dict())
    for s in grads[2:]:
        step(resumed, opt2, s)
    for a, b in zip(ps, resumed):
        assert torch.equal(a, b)


def test_muon_takes_matrices_only(device):
    with pytest.raises(ValueError, match="2-D weight matrices only"):
        Muon([dict(params=[torch.nn.Parameter(torch.randn(8, device=device))])])


def _ddp_rank(rank, world, rendezvous, weights, grads, out):
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world)
    try:
        ours, _ = our_muon(weights, grads, "torch", **HYPER)
        torch.save(ours, f"{out}.{rank}")
    finally:
        dist.destroy_process_group()


def test_ddp_shares_give_the_single_process_step(tmp_path):
    """Two gloo ranks on the CPU, each orthogonalising its share of every stack (3 matrices of
    one shape: 2 and 1; one matrix alone: 1 and none), end with the weights that one
    process gets, on both ranks."""
    weights, grads = matrices_and_grads([(24, 72), (72, 24), (24, 72), (40, 40), (33, 50), (50, 33)], 2, "cpu")
    mp.spawn(_ddp_rank, args=(2, tmp_path / "rendezvous", weights, grads, tmp_path / "out"), nprocs=2)
    single, _ = our_muon(weights, grads, "torch", **HYPER)
    for rank in range(2):
        got = torch.load(f"{tmp_path / 'out'}.{rank}", weights_only=True)
        for i, (g, s) in enumerate(zip(got, single)):
            assert torch.equal(g, s), f"rank {rank}, weight {i}: differs from the single-process step"


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_found_inf_skips_the_step_on_the_device(backend, device):
    """optimizer.found_inf (as train.py and GradScaler set it) not 0: weights, momentum and the
    AdamW group's state stay as they are; 0: the same step as without it."""
    weights, grads = matrices_and_grads([(8, 24), (24, 8), (16, 16)], 2, device)  # small: the CPU interpreter's time
    gains = torch.randn(40, device=device)

    def run(flags):
        params = [torch.nn.Parameter(w.clone()) for w in weights]
        gain = torch.nn.Parameter(gains.clone())
        opt = Muon([dict(params=params), dict(params=[gain], muon=False, lr=1e-2, weight_decay=0.0)],
                   backend=backend, **HYPER)
        for step_grads, flag in zip(grads, flags):
            for p, g in zip(params, step_grads):
                p.grad = g.clone()
            gain.grad = torch.ones_like(gain)
            if flag is not None:
                opt.found_inf = torch.tensor(flag, device=device)
            opt.step()
        return [p.detach().clone() for p in params + [gain]], opt

    plain, _ = run([None, None])
    zero, _ = run([0.0, 0.0])
    skipped, opt = run([None, 1.0])
    first, _ = run([None])
    for p, z, s, f in zip(plain, zero, skipped, first):
        assert torch.equal(p, z) and torch.equal(s, f)
    for p, (w, g) in zip(opt.param_groups[0]['params'], zip(weights, grads[0])):  # the first step's momentum only
        want = torch.zeros_like(w).lerp_(g, 1 - HYPER['momentum'])
        torch.testing.assert_close(opt.state[p]['momentum_buffer'], want, rtol=0,  # the kernel's lerp: an ulp or two
                                   atol=4 * torch.finfo(torch.float32).eps * want.abs().max().item())
    assert opt.state[opt.param_groups[1]['params'][0]]['step'].item() == 1


@pytest.mark.skipif(not CUDA, reason="CUDA graphs need a GPU (this runs in the device tool's CUDA test run)")
def test_found_inf_skips_replayed_steps():
    """The Muon kernels read found_inf from one address, so a replayed CUDA graph skips too."""
    weights, grads = matrices_and_grads([(768, 3072), (3072, 768), (768, 768)], 6, "cuda")
    slots = [torch.empty_like(w) for w in weights]

    def run(flags):
        params = [torch.nn.Parameter(w.clone()) for w in weights]
        opt = Muon([dict(params=params)], backend="triton", **HYPER)
        for step_grads, flag in zip(grads, flags):
            for p, slot, g in zip(params, slots, step_grads):
                slot.copy_(g)
                p.grad = slot
            opt.found_inf = torch.tensor(flag, device="cuda")
            opt.step()
        return [p.detach() for p in params], opt

    skipped, opt = run([0.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    assert opt.graph_replays == 4  # steps 2 to 5, the skipped ones among them
    without, _ = run([0.0, 0.0, 0.0, 0.0])  # the same steps, but for the skipped ones' gradients
    grads[3], grads[4] = grads[4], grads[3]
    without_4th, _ = run([0.0, 0.0, 0.0, 0.0])
    assert not all(torch.equal(a, b) for a, b in zip(skipped, without))
    for a, b in zip(skipped, without_4th):
        assert torch.equal(a, b)


@pytest.mark.skipif(not CUDA, reason="CUDA graphs need a GPU (this runs in the device tool's CUDA test run)")
@pytest.mark.parametrize("period", [1, 2], ids=["same-addresses", "two-sets"])
def test_cuda_graph_steps_equal_eager_steps(period):
    """Steps replayed from CUDA graphs give the same bits as eager steps, with the gradients
    at the same addresses every step or alternating between two sets of addresses (as
    train.py's do), each set eager the first time, captured the second, replayed after."""
    weights, grads = matrices_and_grads([(768, 3072), (3072, 768), (768, 768), (33, 50)], 6, "cuda")
    slot_sets = [[torch.empty_like(w) for w in weights] for _ in range(period)]

    def run(cuda_graphs):
        params = [torch.nn.Parameter(w.clone()) for w in weights]
        opt = Muon([dict(params=params)], backend="triton", cuda_graphs=cuda_graphs, **HYPER)
        for step, step_grads in enumerate(grads):
            for p, slot, g in zip(params, slot_sets[step % period], step_grads):
                slot.copy_(g)
                p.grad = slot
            for group in opt.param_groups:
                group['lr'] = HYPER['lr'] * (1 - 0.1 * step)  # a schedule: the graphs read each step's lr
            opt.step()
        return [p.detach() for p in params], opt

    eager, _ = run(False)
    graphed, opt = run(True)
    assert opt.graph_replays == {1: 4, 2: 2}[period]  # after eager + capture (period 1: steps 0, 1; 2: steps 0 to 3)
    for e, g in zip(eager, graphed):
        assert torch.equal(e, g)
