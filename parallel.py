"""
How train.py's ranks share the model. parallelism='ddp' (torch's DistributedDataParallel, in train.py): each rank
keeps the whole model, and replicas_agree checks that they agree. parallelism='fsdp': FSDP2
(torch.distributed.fsdp.fully_shard) over each transformer block and the root, so that each rank keeps 1/world_size
of the weights, their gradients and AdamW's state; a block's weights are gathered whole for its forward and
backward and freed after. Mixed precision as bf16 training expects: the products in the autocast dtype, fp32 master
weights, gradients reduced in fp32. Its checkpoints are sharded (checkpoint.save_sharded).
"""
import hashlib
import warnings

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard


def refusal(parallelism, fsdp, optimizer, dtype):
    """The one-line error for a parallelism train.py does not run, or None. FSDP does not take Muon (its step
    orthogonalises whole matrices) or fp16 (the loss scaler is written for whole gradients)."""
    if parallelism not in ('ddp', 'fsdp'):
        return f"parallelism must be 'ddp' or 'fsdp', got {parallelism!r}"
    not_taken = [what for what, asked in (("optimizer='muon'", optimizer == 'muon'),
                                          ("dtype='float16'", dtype == torch.float16)) if asked]
    if fsdp and not_taken:
        return f"parallelism='fsdp' does not take {' or '.join(not_taken)}: use 'ddp'"
    return None


def shard(model, dtype, device_type):
    """model's blocks, then the root (embeddings, final norm, head), sharded in place over the default process
    group's ranks on their device_type ('cuda' or 'cpu'); dtype: the dtype the products run in (autocast's), fp32
    for none."""
    for tensor in model.state_dict().values():  # rank 0's initial weights, as DDP broadcasts them
        dist.broadcast(tensor, src=0)
    policy = MixedPrecisionPolicy(param_dtype=None if dtype == torch.float32 else dtype, reduce_dtype=torch.float32)
    # a block's output is a view, which FSDP warns of: an in-place op on it would skip the gather; the next block
    # reads it out of place
    warnings.filterwarnings('ignore', message='FSDP2-wrapped module .* returned a view tensor')
    mesh = init_device_mesh(device_type, (dist.get_world_size(),))  # else CUDA's wherever there is a GPU
    for block in model.transformer.h:
        fully_shard(block, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)


def memory_per_rank(model, tokens, micro_steps, world_size, fsdp, dtype, fused_loss, copies=0):
    """An estimate of one rank's peak memory in bytes, by part, for `micro_steps` micro-steps a step of `tokens`
    tokens each: weights, gradients and AdamW's two moments in fp32 (each rank 1/world_size of them under FSDP, but
    for the gradients accumulated over micro-steps, which FSDP keeps whole until the last reduces them); DDP's
    gradient buckets (a second copy of the gradients) or FSDP's gathered weights (the root's and two blocks', in
    dtype) and one block's whole gradients; and what autograd saves in a micro-step's forward, op by op as
    model.py's blocks with PyTorch's ops save it: the residual stream in fp32, the blocks' tensors in dtype (the
    fused kernels save less); `copies`: the bytes of the bf16 copies of the block matrices that Triton's AdamW keeps
    outside FSDP. CUDA's context, the allocator's slack and compiled graphs' buffers come on top."""
    c, e = model.config, dtype.itemsize
    n = sum(p.numel() for p in model.parameters())
    block = sum(p.numel() for p in model.transformer.h[0].parameters())
    shards = world_size if fsdp else 1
    parts = {'weights, AdamW': 12 * n // shards, 'gradients': 4 * n // (shards if micro_steps == 1 else 1)}
    if fsdp:
        parts["gathered weights, a block's gradients"] = (n - (c.n_layer - 2) * block) * e + 4 * block
    elif copies:
        parts["AdamW's matmul copies"] = copies
    if not fsdp and world_size > 1:
        parts['gradient buckets'] = 4 * n
    d, q, kv, h = c.n_embd, c.n_head * c.head_dim, c.n_kv_head * c.head_dim, c.mlp_hidden
    if c.arch == 'gpt2':  # a token's: the LayerNorms' inputs; c_attn's input, q, k, v, the attention's output;
        layer = 2 * 4 * d + e * (d + q + 2 * kv + q + d + 2 * h)  # c_fc's input, GELU's input and output
    else:  # the RMSNorms' inputs and normalised inputs; c_attn's input, q and k rotated, v, the attention's output;
        layer = 4 * 4 * d + e * (d + 2 * q + 2 * kv + d + 4 * h)  # c_fc's input, SiLU's, the product's, c_proj's
    # the final norm's input and output, and unless the fused loss runs, the loss's log-softmax of the logits
    # (and the logits themselves while it runs)
    loss = 0 if fused_loss else (4 + e) * c.vocab_size
    parts['activations'] = tokens * (c.n_layer * layer + 4 * d + e * d + loss)
    return parts


def memory_summary(model, tokens, micro_steps_in_all, dtype):
    """memory_per_rank's totals under DDP and FSDP at 1, 2, 4 and 8 ranks, in a line, for model as built (its loss,
    the copies its optimizer keeps); micro_steps_in_all: a step's micro-steps over all ranks."""
    fused_loss = model.kernels['cross_entropy'] == 'triton'
    copies = sum(p.matmul_copy.nbytes for p in model.parameters() if hasattr(p, 'matmul_copy'))

    def row(fsdp):
        gib = [sum(memory_per_rank(model, tokens, max(1, micro_steps_in_all // ranks), ranks, fsdp, dtype,
                                   fused_loss, copies).values()) / 2**30 for ranks in (1, 2, 4, 8)]
        return '/'.join(f"{x:.1f}" for x in gib)
    return f"memory per rank, estimated in GiB at 1/2/4/8 ranks: ddp {row(False)}, fsdp {row(True)} (parallel.py)"


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


def mean_over_ranks(tensor):
    """tensor averaged over the ranks, in place (a collective); as it is in one process."""
    if dist.is_initialized():
        dist.all_reduce(tensor)
        tensor /= dist.get_world_size()


def any_rank(flag, group=None):
    """Whether flag holds on any rank (a collective); flag in one process."""
    if not dist.is_initialized():
        return flag
    flags = torch.tensor([float(flag)])
    dist.all_reduce(flags, op=dist.ReduceOp.MAX, group=group)
    return flags.item() > 0
