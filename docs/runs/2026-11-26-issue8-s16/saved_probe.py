"""Which tensors the min-cut partitioner saves for the backward of a tiny compiled GPT-2 under bf16 autocast:
the bf16 block matrices among the forward graph's saved outputs, with functorch's defaults and with each
ban_recompute_* switch off. CPU: TRITON_INTERPRET=1 python saved_probe.py (run from the repository root)."""
import sys, collections, torch
sys.path.insert(0, '.')
from torch._functorch.aot_autograd import aot_module_simplified
from functorch.compile import min_cut_rematerialization_partition, make_boxed_func
from model import GPT
from tests.test_model import tiny_config, batch

def run(mode, setting):
    saved = []
    def fw(gm, inputs):
        out = [n for n in gm.graph.nodes if n.op == 'output'][0].args[0]
        for n in out:
            v = n.meta.get('val') if hasattr(n, 'meta') else None
            if isinstance(v, torch.Tensor):
                saved.append((tuple(v.shape), str(v.dtype).replace('torch.', ''), n.name))
        return make_boxed_func(gm.forward)
    backend = lambda gm, inputs: aot_module_simplified(gm, inputs, fw_compiler=fw, bw_compiler=lambda g, i: make_boxed_func(g.forward),
                                                      partition_fn=min_cut_rematerialization_partition)
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = GPT(tiny_config('gpt2'), kernels=setting, device_type='cpu', recompute=mode)
    mats = {tuple(s) for n, p in model.named_parameters() if n.startswith('transformer.h.') and p.dim() == 2 for s in (p.shape, p.shape[::-1])}
    m = torch.compile(model, backend=backend)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        _, loss = m(*batch('cpu'))
    loss.backward()
    print(mode, setting, "saved bf16 matrices:", [s for s in saved if s[0] in mats and s[1] == 'bfloat16'])
for setting in ('torch', 'triton'):
    for mode in ('none', 'activation'):
        run(mode, setting)
import torch._functorch.config as fc
for flag in ('ban_recompute_used_far_apart', 'ban_recompute_not_in_allowlist', 'ban_recompute_long_fusible_chains', 'ban_recompute_materialized_backward'):
    with fc.patch(**{flag: False}):
        print("==", flag, "False")
        run('activation', 'triton')
