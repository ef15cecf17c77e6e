"""Does the checkpoint's recompute tag reach the Triton kernels in the joint graph on the GPU (where
our ops are torch.library.triton_op, traced into triton_kernel_wrapper_functional nodes)? A one-block
GPT-2 (Triton kernels, bf16 autocast) compiled with recompute='block': each call_function node of
the joint forward+backward graph, its target and its recompute tag, counted."""
import os
import sys
import collections

import torch
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch._dynamo.backends.common import aot_autograd

sys.path.insert(0, os.getcwd())
from model import GPT, GPTConfig

tags = collections.Counter()

def partition(joint, joint_inputs, **kwargs):
    for node in joint.graph.nodes:
        if node.op == 'call_function' and node.meta.get('partitioner_tag') != 'is_backward':
            target = str(node.target)
            if 'triton' in target or 'kernels' in target or 'mm' in target:
                tags[(target, str(node.meta.get('recompute')))] += 1
    return min_cut_rematerialization_partition(joint, joint_inputs, **kwargs)

cfg = GPTConfig(n_layer=1, n_head=12, n_embd=768, block_size=256, vocab_size=50304, bias=False, dropout=0.0)
model = GPT(cfg, kernels='triton', device_type='cuda', recompute='block').cuda()
step = torch.compile(model, backend=aot_autograd(fw_compiler=lambda gm, _: gm, bw_compiler=lambda gm, _: gm,
                                                 partition_fn=partition))
idx = torch.randint(50304, (2, 256), device='cuda')
with torch.autocast('cuda', dtype=torch.bfloat16):
    _, loss = step(idx, idx)
loss.backward()
for (target, tag), n in sorted(tags.items()):
    print(f"{n:3d} x {target}  recompute={tag}")
