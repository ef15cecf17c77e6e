"""What the compiled forward keeps for the backward (AOTAutograd's min-cut partition, as Inductor
uses it), per recompute mode: the forward graph's outputs beyond the loss, and which ops the
backward graph recomputes."""
import os, sys, collections
import torch
sys.path.insert(0, os.getcwd())  # run from the repo's root
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.partitioners import min_cut_rematerialization_partition
from model import GPT, GPTConfig

kern = sys.argv[1]
for mode in ('none', 'mlp', 'block'):
    rec = {'fw_bytes': 0, 'fw_n': 0, 'graphs': 0, 'bw_ops': collections.Counter()}
    def fw(gm, inputs):
        out = [n for n in gm.graph.nodes if n.op == 'output'][0]
        vals = out.args[0]
        total = 0
        for v in vals:
            if isinstance(v, torch.fx.Node) and 'val' in v.meta and isinstance(v.meta['val'], torch.Tensor):
                t = v.meta['val']
                total += t.numel() * t.element_size()
        rec['fw_bytes'] += total
        rec['fw_n'] += len(vals)
        rec['graphs'] += 1
        return gm
    def bw(gm, inputs):
        ops = collections.Counter(str(n.target) for n in gm.graph.nodes if n.op == 'call_function')
        rec['bw_ops'].update({k: v for k, v in ops.items() if 'kernels' in k or 'mm' in k or 'gelu' in k})
        return gm
    backend = aot_autograd(fw_compiler=fw, bw_compiler=bw, partition_fn=min_cut_rematerialization_partition)
    torch.manual_seed(0)
    cfg = GPTConfig(n_layer=2, n_head=2, n_embd=64, block_size=32, vocab_size=128, bias=False, dropout=0.0)
    m = GPT(cfg, kernels=kern, device_type='cpu', recompute=mode)
    f = torch.compile(m, backend=backend)
    idx = torch.randint(128, (2, 32))
    _, loss = f(idx, idx)
    loss.backward()
    print(mode, 'graphs', rec['graphs'], 'saved tensors', rec['fw_n'], 'bytes', rec['fw_bytes'], 'backward ops', rec['bw_ops'])
