"""
How train.py's ranks share the model. parallelism='ddp' (torch's DistributedDataParallel, in train.py): each rank
keeps the whole model, and replicas_agree checks that they agree. parallelism='fsdp': FSDP2
(torch.distributed.fsdp.fully_shard) over each transformer block and the root, so that each rank keeps 1/world_size
of the weights, their gradients and AdamW's state; a block's weights are gathered whole for its forward and
backward and freed after. Mixed precision as bf16 training expects: the products in the autocast dtype, fp32 master
weights, gradients reduced in fp32. A checkpoint is whole (every rank gathers, rank 0 writes), in the layout that
the single-process and DDP runs write and resume from.
"""
import hashlib

import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_optimizer_state_dict
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard


def shard(model, dtype):
    """model's blocks, then the root (embeddings, final norm, head), sharded in place over the default process
    group; dtype: the dtype the products run in (autocast's), fp32 for none."""
    for tensor in model.state_dict().values():  # rank 0's initial weights, as DDP broadcasts them
        dist.broadcast(tensor, src=0)
    policy = MixedPrecisionPolicy(param_dtype=None if dtype == torch.float32 else dtype, reduce_dtype=torch.float32)
    for block in model.transformer.h:
        fully_shard(block, mp_policy=policy)
    fully_shard(model, mp_policy=policy)


def full_state(model, optimizer):
    """(model's state dict, optimizer's) whole, on the CPU, on rank 0 (the others get empty ones), as an unsharded
    model.state_dict() and optimizer.state_dict() give them: the optimizer's parameters numbered in its groups'
    order. A collective: every rank calls it."""
    model.reshard()  # the root's weights stay gathered after a forward without a backward (an evaluation)
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    named = get_optimizer_state_dict(model, optimizer, options=options)  # its parameters by name
    number = {name: i for i, name in enumerate(n for g in named.get('param_groups', []) for n in g['params'])}
    optimizer_state = dict(state={number[n]: s for n, s in named.get('state', {}).items()},
                           param_groups=[dict(g, params=[number[n] for n in g['params']])
                                         for g in named.get('param_groups', [])])
    return get_model_state_dict(model, options=options), optimizer_state


def replicas_agree(tensors, what):
    """Whether every DDP rank holds the same values of `tensors` (a sha256 of each rank's), said in one line."""
    digest = hashlib.sha256(b''.join(t.detach().float().cpu().numpy().tobytes() for t in tensors)).hexdigest()
    digests = [None] * dist.get_world_size()
    dist.all_gather_object(digests, digest)
    print(f"ddp: {what} identical on all {len(digests)} ranks (sha256 {digest[:12]})" if len(set(digests)) == 1
          else f"ddp: WARNING: {what} differ across ranks: {digests}")
    return len(set(digests)) == 1


def every_rank(value, group=None):
    """[each rank's value] (a collective: every rank calls it at the same point); [value] in one process."""
    if not dist.is_initialized():
        return [value]
    values = [None] * dist.get_world_size()
    dist.all_gather_object(values, value, group=group)
    return values


def any_rank(flag, group=None):
    """Whether flag holds on any rank (a collective); flag in one process."""
    if not dist.is_initialized():
        return flag
    flags = torch.tensor([float(flag)])
    dist.all_reduce(flags, op=dist.ReduceOp.MAX, group=group)
    return flags.item() > 0
