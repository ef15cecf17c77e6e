"""
parallel.memory_per_rank, the estimate train.py prints at start-up, against the memory that CPU runs of small
models hold at their peak, counted tensor by tensor by PyTorch's own trackers: MemTracker in one process,
FSDPMemTracker on two gloo ranks under FSDP (sharded weights and AdamW state, gathered weights, whole accumulated
gradients). fp32, two micro-steps a step, the PyTorch ops the estimate counts: within 10%.
"""
import json
import os
import sys

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import parallel
from model import GPT, GPTConfig

SHAPES = {'gpt2': dict(arch='gpt2', n_layer=3, n_head=6, n_embd=192, block_size=96, vocab_size=512, dropout=0.0),
          'llama': dict(arch='llama', n_layer=3, n_head=6, n_kv_head=2, n_embd=192, block_size=96, vocab_size=512,
                        dropout=0.0)}
BATCH, MICRO_STEPS = 4, 2


def peak_bytes(model, optimizer, tracker):
    """The peak of two steps of MICRO_STEPS micro-steps, as the tracker counts it."""
    x = torch.randint(model.config.vocab_size, (BATCH, model.config.block_size))
    with tracker:
        for _ in range(2):
            for micro_step in range(MICRO_STEPS):
                if hasattr(model, 'set_requires_gradient_sync'):  # FSDP: reduced on the last micro-step only
                    model.set_requires_gradient_sync(micro_step == MICRO_STEPS - 1)
                tracker.reset_mod_stats()  # the trackers take one forward of a module between resets
                model(x, x)[1].backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    return next(iter(tracker.get_tracker_snapshot('peak').values()))['Total']  # the one device's


def estimate(model, world_size, fsdp):
    return sum(parallel.memory_per_rank(model, BATCH * model.config.block_size, MICRO_STEPS, world_size, fsdp,
                                        torch.float32, fused_loss=False).values())


@pytest.mark.parametrize("arch", SHAPES)
def test_the_estimate_of_one_process(arch):
    from torch.distributed._tools.mem_tracker import MemTracker
    torch.manual_seed(0)
    model = GPT(GPTConfig(**SHAPES[arch]))
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), 'cpu')
    tracker = MemTracker()
    tracker.track_external(model, optimizer)
    measured = peak_bytes(model, optimizer, tracker)
    assert abs(estimate(model, 1, False) / measured - 1) < 0.1, (estimate(model, 1, False), measured)


def fsdp_rank(rank, world_size, arch, folder):
    dist.init_process_group('gloo', init_method=f'file://{folder}/rendezvous', rank=rank, world_size=world_size)
    from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker
    torch.manual_seed(0)
    model = GPT(GPTConfig(**SHAPES[arch]))
    parallel.shard(model, torch.float32, 'cpu')
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), 'cpu')
    measured = peak_bytes(model, optimizer, FSDPMemTracker(model, optimizer))
    with open(f'{folder}/rank{rank}.json', 'w') as f:
        json.dump([estimate(model, world_size, True), measured], f)
    dist.destroy_process_group()


@pytest.mark.parametrize("arch", SHAPES)
def test_the_estimate_of_an_fsdp_rank(arch, tmp_path):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the spawned ranks import it
    mp.spawn(fsdp_rank, args=(2, arch, str(tmp_path)), nprocs=2)
    for rank in range(2):
        estimated, measured = json.loads((tmp_path / f'rank{rank}.json').read_text())
        assert abs(estimated / measured - 1) < 0.1, (rank, estimated, measured)


@pytest.mark.parametrize("config, params, shape", [
    ('train_gpt2_xl.py', 1.56e9, dict(n_layer=48, n_embd=1600, head_dim=64, n_kv_head=25, block_size=1024)),
    ('train_llama_1b.py', 1.08e9, dict(n_layer=22, n_embd=2048, head_dim=128, n_kv_head=4, block_size=2048))])
def test_the_large_configs_and_their_memory(config, params, shape):
    """The configs build the models they say (on the meta device: no memory), and their estimate says what
    sharding buys: under FSDP at 8 ranks, AdamW's state and the weights are 1/8 of DDP's."""
    settings = {}
    exec(open(os.path.join(os.path.dirname(parallel.__file__), 'config', config)).read(), settings)
    keys = ('arch', 'n_layer', 'n_head', 'n_kv_head', 'n_embd', 'block_size', 'rope_theta')
    with torch.device('meta'):
        model = GPT(GPTConfig(**{k: settings[k] for k in keys if k in settings}, vocab_size=50304, bias=False))
    assert {k: getattr(model.config, k) for k in shape} == shape
    assert abs(sum(p.numel() for p in model.parameters()) / params - 1) < 0.01
    tokens, micro_steps = settings['batch_size'] * settings['block_size'], settings['gradient_accumulation_steps']
    ddp, fsdp = (parallel.memory_per_rank(model, tokens, micro_steps // 8, 8, sharded, torch.bfloat16, True)
                 for sharded in (False, True))
    assert fsdp['weights, AdamW'] == ddp['weights, AdamW'] // 8 and fsdp['activations'] == ddp['activations']
    assert sum(fsdp.values()) < sum(ddp.values()) < 141e9  # an H200's memory
