"""
step_graph.py: a training step replayed from one CUDA graph does what the step itself does,
step after step, with a learning rate that changes between replays, alone and under DDP.
"""
import os
import sys
import contextlib

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from step_graph import StepGraph, set_lr
from kernels.backend import cublas_without_workspace
from kernels.choose import resolve
from model import GPTConfig, GPT

cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")


def test_set_lr_writes_a_tensor_in_place_and_replaces_a_number():
    lr = torch.tensor(1.0)
    group = dict(lr=lr)
    set_lr(group, 0.25)
    assert group['lr'] is lr and lr.item() == 0.25
    group = dict(lr=1.0)
    set_lr(group, 0.25)
    assert group['lr'] == 0.25


WORKSPACE_VARIABLES = ('CUBLAS_WORKSPACE_CONFIG', 'CUBLASLT_WORKSPACE_SIZE')


def workspace_variables():
    return tuple(os.environ.get(name) for name in WORKSPACE_VARIABLES)


@pytest.fixture
def unset_workspace_variables(monkeypatch):
    """Both variables unset for the test, and as they were after it (set first: monkeypatch records
    nothing when it deletes a variable that is not set)."""
    for name in WORKSPACE_VARIABLES:
        monkeypatch.setenv(name, 'x')
        monkeypatch.delenv(name)


def test_cublas_without_workspace_sets_the_variables_inside_only(unset_workspace_variables, monkeypatch):
    """torch 2.11's way: the variables, which it reads at every cuBLAS call; a user's own are left alone."""
    monkeypatch.delattr(torch.backends.cuda, 'cublas_workspace_size', raising=False)
    with cublas_without_workspace():
        assert workspace_variables() == (':0:0', '0')
    assert workspace_variables() == (None, None)
    with pytest.raises(RuntimeError, match="inside"):
        with cublas_without_workspace():
            raise RuntimeError("inside")
    assert workspace_variables() == (None, None)
    monkeypatch.setenv('CUBLASLT_WORKSPACE_SIZE', '64')  # the user's Lt size stays
    with cublas_without_workspace():
        assert workspace_variables() == (':0:0', '64')
    assert workspace_variables() == (None, '64')
    monkeypatch.setenv('CUBLAS_WORKSPACE_CONFIG', ':4096:8')  # the user's workspace stays, and nothing is set
    with cublas_without_workspace():
        assert workspace_variables() == (':4096:8', '64')
    assert workspace_variables() == (':4096:8', '64')


def test_cublas_without_workspace_takes_torchs_setters_where_they_exist(unset_workspace_variables, monkeypatch):
    """torch 2.13's way: torch.backends.cuda's size setters (faked here: a CPU build has none to call)."""
    sizes = {'cublas': 32 << 20, 'cublaslt': 1 << 20}

    def setter(name):
        def size(value=None):
            if value is not None:
                sizes[name] = value
            return sizes[name]
        return size
    for name in sizes:
        monkeypatch.setattr(torch.backends.cuda, f'{name}_workspace_size', setter(name), raising=False)
    with pytest.raises(RuntimeError, match="inside"):
        with cublas_without_workspace():
            assert sizes == {'cublas': 0, 'cublaslt': 0} and workspace_variables() == (None, None)
            raise RuntimeError("inside")
    assert sizes == {'cublas': 32 << 20, 'cublaslt': 1 << 20}
    monkeypatch.setenv('CUBLAS_WORKSPACE_CONFIG', ':4096:8')
    with cublas_without_workspace():
        assert sizes == {'cublas': 32 << 20, 'cublaslt': 1 << 20}


def test_step_graph_warms_up_and_records_without_cublas_workspace(unset_workspace_variables, monkeypatch):
    """StepGraph's logic with CUDA's streams and graphs faked (CI has no GPU): the step runs `warmup` times,
    then once more while recorded, inside cublas_without_workspace; replays follow, outside it; the
    optimizer's groups become capturable with tensor learning rates; after release() it records again."""
    monkeypatch.delattr(torch.backends.cuda, 'cublas_workspace_size', raising=False)
    recording = []

    class Stream:
        device = 'cpu'

        def wait_stream(self, other):
            pass

    class Graph:
        replays = 0

        def replay(self):
            self.replays += 1

        def reset(self):
            pass

    @contextlib.contextmanager
    def graph(g, stream=None):
        recording.append(g)
        yield
        recording.pop()
    for name, fake in dict(Stream=Stream, CUDAGraph=Graph, graph=graph, current_stream=Stream,
                           stream=lambda s: contextlib.nullcontext()).items():
        monkeypatch.setattr(torch.cuda, name, fake)
    optimizer = torch.optim.AdamW([torch.zeros(2, requires_grad=True)], lr=1e-3)
    seen = []
    run = StepGraph(lambda: seen.append((workspace_variables(), bool(recording))), optimizer, warmup=2)
    for _ in range(5):
        run()
        assert workspace_variables() == (None, None)
    assert seen == [((':0:0', '0'), False)] * 2 + [((':0:0', '0'), True)]
    assert run.replays == run.graph.replays == 3
    assert optimizer.param_groups[0]['capturable'] and torch.is_tensor(optimizer.param_groups[0]['lr'])
    run.release()
    run()
    assert seen[-1] == ((':0:0', '0'), True) and len(seen) == 4 and run.replays == 4


@cuda_only
def test_a_recorded_step_runs_cublas_without_its_workspace(unset_workspace_variables):
    """The effect on the GPU: for this GPT-2 product cuBLAS's default picks a cooperative kernel and
    zeroes its semaphores with a memset first (the H100, torch 2.11); the graph StepGraph records has no
    memset."""
    x = torch.randn(12288, 768, device='cuda', dtype=torch.bfloat16)
    w = torch.randn(3072, 768, device='cuda', dtype=torch.bfloat16)
    out = torch.empty(12288, 3072, device='cuda', dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW([torch.zeros(1, device='cuda', requires_grad=True)], lr=1e-3, fused=True)

    def replayed_kernels(replay):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            replay()
            torch.cuda.synchronize()
        return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]

    side, plain = torch.cuda.Stream(), torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        torch.mm(x, w.t(), out=out)
        with torch.cuda.graph(plain, stream=side):
            torch.mm(x, w.t(), out=out)
    torch.cuda.synchronize()
    if not any('Memset' in name for name in replayed_kernels(plain.replay)):
        pytest.skip("cuBLAS's default zeroes no semaphores for this product here: nothing to tell apart")
    run = StepGraph(lambda: torch.mm(x, w.t(), out=out), optimizer, warmup=2)
    for _ in range(3):
        run()
    names = replayed_kernels(run)
    assert names and not any('Memset' in name for name in names), names


def train(make_model, graphed, steps=8, batch=(4, 64), vocab=96, micro_steps=1, ddp=False):
    """The losses and final weights of `steps` AdamW steps (fused, as model.py sets it up on
    CUDA), the learning rate changed before every step; graphed: through StepGraph. ddp: the
    model under DDP, built on the graph's stream as train.py builds it, each rank on its own
    batches, gradients all-reduced on the last micro-step only."""
    torch.manual_seed(0)
    stream = torch.cuda.Stream()
    model = make_model().cuda()
    if ddp:
        with torch.cuda.stream(stream):
            model = DDP(model, device_ids=[torch.cuda.current_device()])
        torch.cuda.current_stream().wait_stream(stream)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    torch.manual_seed(dist.get_rank() if ddp else 0)
    data = torch.randint(vocab, (steps, micro_steps, 2, *batch), device='cuda')
    inputs = torch.empty_like(data[0])
    loss = torch.zeros((), device='cuda')

    def step():
        loss.zero_()
        for micro_step in range(micro_steps):
            if ddp:
                model.require_backward_grad_sync = micro_step == micro_steps - 1
            with torch.autocast('cuda', dtype=torch.bfloat16):
                _, micro_loss = model(inputs[micro_step, 0], inputs[micro_step, 1])
            (micro_loss / micro_steps).backward()
            loss.add_(micro_loss.detach())
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    def plain_step():  # with the cuBLAS kernels StepGraph records (by default without cuBLAS's workspace)
        with cublas_without_workspace():
            step()

    warmup = StepGraph.DDP_WARMUP if ddp else 2
    run = StepGraph(step, optimizer, warmup=warmup, stream=stream) if graphed else plain_step
    losses = []
    for i in range(steps):
        for group in optimizer.param_groups:
            set_lr(group, 1e-3 * (i + 1))  # a schedule a graph that baked the rate in would miss
        inputs.copy_(data[i])
        run()
        losses.append(loss.item())
    if graphed:
        assert run.replays == steps - warmup and run.graph is not None
    return losses, [p.detach().cpu() for p in model.parameters()]


class TinyLM(torch.nn.Module):
    """Deterministic kernels only (no embedding: its backward adds with atomics), so the
    graphed and plain steps must agree bit for bit."""

    def __init__(self, vocab=96, width=64):
        super().__init__()
        self.inp = torch.nn.Linear(vocab, width)
        self.out = torch.nn.Linear(width, vocab)

    def forward(self, idx, targets):
        h = torch.nn.functional.one_hot(idx, self.inp.in_features).float()
        logits = self.out(torch.relu(self.inp(h)))
        return logits, torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), targets.flatten())


@cuda_only
def test_replays_equal_the_step_bit_for_bit():
    plain, graphed = train(TinyLM, False), train(TinyLM, True)
    assert plain[0] == graphed[0]
    assert all(torch.equal(a, b) for a, b in zip(plain[1], graphed[1]))


@cuda_only
@pytest.mark.parametrize("kernels", ['triton', 'torch'])
def test_a_gpt_with_each_kernel_set_trains_alike_graphed(kernels):
    cfg = GPTConfig(n_layer=2, n_head=2, n_embd=64, block_size=64, vocab_size=96, dropout=0.0)
    plain, graphed = (train(lambda: GPT(cfg, resolve(kernels, cfg, 'cuda')), g) for g in (False, True))
    assert max(abs(a - b) for a, b in zip(plain[0], graphed[0])) < 1e-3, (plain[0], graphed[0])
    # not asserted bit for bit (SDPA's backward may add with atomics), but the same weights to rounding
    assert max(((a - b).norm() / a.norm()).item() for a, b in zip(plain[1], graphed[1])) < 1e-4


def _ddp_rank(rank, world, rendezvous, out):
    torch.cuda.set_device(rank)
    dist.init_process_group('nccl', init_method=f'file://{rendezvous}', rank=rank, world_size=world)
    try:
        torch.save([train(TinyLM, graphed, steps=14, micro_steps=2, ddp=True) for graphed in (False, True)],
                   f'{out}.{rank}')
    finally:
        dist.destroy_process_group()


@cuda_only
def test_ddp_replays_equal_the_step_bit_for_bit(tmp_path):
    """Under DDP (a rank per GPU, up to two; one rank still all-reduces through NCCL) the graph
    holds the last micro-step's all-reduces and the first's lack of them: replays equal the
    plain DDP step bit for bit on every rank."""
    world = min(torch.cuda.device_count(), 2)
    mp.spawn(_ddp_rank, args=(world, tmp_path / 'rendezvous', tmp_path / 'out'), nprocs=world)
    for rank in range(world):
        plain, graphed = torch.load(f"{tmp_path / 'out'}.{rank}", weights_only=True)
        assert plain[0] == graphed[0], (rank, plain[0], graphed[0])
        assert all(torch.equal(a, b) for a, b in zip(plain[1], graphed[1])), rank
