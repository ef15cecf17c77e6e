"""
How train.py's ranks share the model. parallelism='ddp' (torch's DistributedDataParallel, in train.py): each rank
keeps the whole model, and replicas_agree checks that they agree. parallelism='fsdp': FSDP2
(torch.distributed.fsdp.fully_shard) over each transformer block and the root, so that each rank keeps 1/world_size
of the weights, their gradients and AdamW's state; a block's weights are gathered whole for its forward and
backward and freed after. Mixed precision as bf16 training expects: the products in the autocast dtype, fp32 master
weights, gradients reduced in fp32. Its checkpoints are sharded (checkpoint.save_sharded).
"""
import hashlib

import torch
import torch.distributed as dist
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
