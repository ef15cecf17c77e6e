"""
step_graph.py: a training step replayed from one CUDA graph does what the step itself does,
step after step, with a learning rate that changes between replays.
"""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from step_graph import StepGraph, set_lr
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


def train(make_model, graphed, steps=8, batch=(4, 64), vocab=96):
    """The losses and final weights of `steps` AdamW steps (fused, as model.py sets it up on
    CUDA), the learning rate changed before every step; graphed: through StepGraph."""
    torch.manual_seed(0)
    model = make_model().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    data = torch.randint(vocab, (steps, 2, *batch), device='cuda')
    X, Y = torch.empty_like(data[0, 0]), torch.empty_like(data[0, 1])
    loss = torch.zeros((), device='cuda')

    def step():
        with torch.autocast('cuda', dtype=torch.bfloat16):
            _, step_loss = model(X, Y)
        step_loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss.copy_(step_loss.detach())

    run = StepGraph(step, optimizer, warmup=2) if graphed else step
    losses = []
    for i in range(steps):
        for group in optimizer.param_groups:
            set_lr(group, 1e-3 * (i + 1))  # a schedule a graph that baked the rate in would miss
        X.copy_(data[i, 0])
        Y.copy_(data[i, 1])
        run()
        losses.append(loss.item())
    if graphed:
        assert run.replays == steps - 2 and run.graph is not None
    return losses, [p.detach().clone() for p in model.parameters()]


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
    plain, graphed = (train(lambda: GPT(cfg, kernels=kernels), g) for g in (False, True))
    assert max(abs(a - b) for a, b in zip(plain[0], graphed[0])) < 1e-3, (plain[0], graphed[0])
    # the embedding's backward adds with atomics: not bit for bit, but the same weights to rounding
    assert max(((a - b).norm() / a.norm()).item() for a, b in zip(plain[1], graphed[1])) < 1e-4
