"""What the compiled forward keeps for the backward with recompute='mlp' against 'activation', LLaMA and GPT-2, the
ops as 'auto' picks them for the compiled step on the H100 (PyTorch's MLP activation, the rest Triton): the forward
graph's saved outputs by shape, under bf16 autocast, partitioned as compile_model partitions. CPU:
TRITON_INTERPRET=1 python docs/runs/2026-11-26-issue8-s18/mlp_probe.py"""
import sys, collections, torch
sys.path.insert(0, '.')
from torch._functorch.aot_autograd import aot_module_simplified
from torch._functorch import config as functorch_config
from functorch.compile import min_cut_rematerialization_partition, make_boxed_func
from model import GPT, PARTITIONER_OPTIONS
from tests.test_model import tiny_config, batch

def run(arch, mode):
    saved = []
    def fw(gm, inputs):
        out = [n for n in gm.graph.nodes if n.op == 'output'][0].args[0]
        for n in out:
            v = n.meta.get('val') if hasattr(n, 'meta') else None
            if isinstance(v, torch.Tensor) and v.numel() > 64 * 4:
                saved.append((tuple(v.shape), str(v.dtype).replace('torch.', ''), n.name))
        return make_boxed_func(gm.forward)
    backend = lambda gm, inputs: aot_module_simplified(gm, inputs, fw_compiler=fw, bw_compiler=lambda g, i: make_boxed_func(g.forward),
                                                      partition_fn=min_cut_rematerialization_partition)
    torch._dynamo.reset()
    torch.manual_seed(0)
    overrides = dict(layer_norm=True, rms_norm=True, rotary=True, mlp=False, attention=False, cross_entropy=True)
    model = GPT(tiny_config(arch), kernels='auto', device_type='cpu', overrides=overrides, recompute=mode, autocast_residual=True)
    m = torch.compile(model, backend=backend)
    with functorch_config.patch(PARTITIONER_OPTIONS), torch.autocast('cpu', dtype=torch.bfloat16):
        _, loss = m(*batch('cpu'))
    loss.backward()
    counts = collections.Counter((s, d) for s, d, _ in saved)
    nbytes = sum(torch.Size(s).numel() * (2 if d == 'bfloat16' else 4) for s, d, _ in saved)
    print(f"{arch} {mode}: {nbytes:,} bytes saved (tensors over 256 elements)")
    for (s, d), n in sorted(counts.items(), key=lambda kv: -torch.Size(kv[0][0]).numel() * kv[1]):
        print(f"   {n:3d} x {s} {d}")
for arch in ('llama', 'gpt2'):
    for mode in ('activation', 'mlp'):
        run(arch, mode)
