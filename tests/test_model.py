"""GPT forward/backward for both architectures, and the kernel swap: the same
parameter names and the same loss and gradients with the Triton kernels on and off."""
import dataclasses
import importlib
import math

import pytest
import torch
import torch.nn.functional as F

import kernels
import kernels.choose as choose
from kernels.choose import ARCH_OPS, resolve
from kernels.linear_cross_entropy import model_chunk_bytes
from model import GPT, GPTConfig, RECOMPUTE, Norm, compile_model
from conftest import count_launches

rowwise = importlib.import_module("kernels.rowwise_fp8")  # the module: the package's kernels.rowwise_fp8 is the op

def tiny_config(arch, **kw):
    return GPTConfig(block_size=32, vocab_size=67, n_layer=2, n_head=4, n_embd=64, arch=arch,
                     n_kv_head=2 if arch == 'llama' else None, **kw)

def build(config, setting, device=None, overrides=None, **kw):
    """GPT(config, ...) with its kernels resolved from `setting` as the scripts resolve them (kernels.choose)."""
    device_type = device or ('cuda' if torch.cuda.is_available() else 'cpu')
    return GPT(config, resolve(setting, config, device_type, overrides), **kw)

def batch(device, B=2, T=15, V=67, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(V, (B, T), generator=g).to(device), torch.randint(V, (B, T), generator=g).to(device))

@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_forward_backward(arch, device):
    torch.manual_seed(0)
    model = GPT(tiny_config(arch)).to(device)  # no map: PyTorch everywhere, nanoGPT's model
    assert model.kernels == dict.fromkeys(ARCH_OPS[arch], 'torch')
    x, y = batch(device)
    logits, loss = model(x, y)
    assert logits is None  # training: the loss only
    assert abs(loss.item() - math.log(67)) < 0.5  # near uniform at initialisation
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, name
    logits, loss = model(x)  # inference: last position only
    assert logits.shape == (2, 1, 67) and loss is None
    assert model.generate(x[:, :4], 5, temperature=0.0).shape == (2, 9)

def autocast_micro_steps(model, compiled, device):
    """Two accumulated micro-steps of model under bf16 autocast, eager or traced by torch.compile
    (aot_eager, which keeps bits). Returns (the losses, the gradients, the model as stepped, the
    last loss with its graph)."""
    if compiled:  # compiled afresh: past Dynamo's recompile limit GPT.forward would run eager unnoticed
        torch._dynamo.reset()
    stepped = torch.compile(model, backend='aot_eager') if compiled else model
    losses = []
    for micro_step in range(2):
        with torch.autocast(device, dtype=torch.bfloat16):
            _, loss = stepped(*batch(device, seed=micro_step))  # two batches of one shape: one graph
        loss.backward()
        losses.append(loss.detach())
    return losses, [p.grad for p in model.parameters()], stepped, loss

def equal_but_rounding(a, b, rounding):
    """a equals b bit for bit (rounding 0), or as a whole within `rounding` of b's size."""
    return torch.equal(a, b) if rounding == 0 else (a - b).norm().item() <= rounding * b.norm().item()

@pytest.mark.parametrize("arch, gelu", [("gpt2", "none"), ("gpt2", "tanh"), ("llama", "none")])
@pytest.mark.parametrize("setting", ["torch", "triton"])
@pytest.mark.parametrize("recompute", ["activation", "mlp"])
def test_recompute_gives_the_same_loss_and_gradients(arch, gelu, setting, recompute, device):
    """recompute='activation' / 'mlp' (the backward recomputes those activations) in fp32, with dropout
    (its draws replayed in the recomputation): the loss and every gradient equal the plain
    model's bit for bit, with PyTorch's ops and with the Triton kernels alike (but the Triton
    attention, which has no dropout), except with the Triton kernels (their norms' or activation's
    backward kernels write the output again): within fp32 rounding there. GPT-2 with GELU's tanh form
    (no biases) and the Triton kernels has its MLP as kernels.gelu_mlp (GELU in the matmuls' epilogues),
    recomputed whole with 'mlp', but with 'activation' the GELU kernel's pass: there the two runs' MLPs
    are two paths, within fp32 rounding too."""
    runs = {}
    for mode in ('none', recompute):
        torch.manual_seed(0)
        model = build(tiny_config(arch, dropout=0.1, bias=gelu == 'none', gelu_approximate=gelu), setting, device,
                      overrides={'attention': False}, recompute=mode).to(device)
        torch.manual_seed(1)
        _, loss = model(*batch(device))
        loss.backward()
        runs[mode] = loss, [p.grad for p in model.parameters()]
    two_paths = recompute == 'activation' and setting == 'triton' and gelu == 'tanh'
    rounding = torch.finfo(torch.float32).eps * 16
    assert equal_but_rounding(runs[recompute][0], runs['none'][0], rounding if two_paths else 0)
    # the Triton norm, GELU or SwiGLU backward that writes the output again is another compiled kernel:
    # the GPU's compiler may fuse its fp32 arithmetic differently (kernels' tests hold it to the three-way rule)
    # (under the CPU interpreter there is no compiler to do that: bit for bit there)
    rewritten = setting == 'triton' and not kernels.INTERPRET or two_paths
    rounding = rounding if rewritten else 0
    assert all(equal_but_rounding(a, b, rounding) for a, b in zip(runs['none'][1], runs[recompute][1]))
    for unknown in ('attention', 'block'):  # 'block' was a setting once: no longer
        with pytest.raises(ValueError, match="recompute must be one of"):
            GPT(tiny_config(arch), recompute=unknown)

def test_loss_chunk_reaches_the_loss_and_changes_only_rounding(device, monkeypatch):
    """The model's chunk of the fused loss (kernels.linear_cross_entropy.model_chunk_bytes): without recompute
    400 MiB of bf16 logits, or 4096 rows where those are more; with recompute the op's own default (None). The
    chunk the model holds is the one the op gets; 8-row chunks give one chunk's loss and gradients but for fp32
    rounding."""
    assert GPT(tiny_config('gpt2')).loss_chunk_bytes == model_chunk_bytes(67, False) == 400 * 2**20
    assert model_chunk_bytes(131072, False) == 4096 * 131072 * 2  # 1 GiB: a LLaMA-3-sized vocabulary
    assert model_chunk_bytes(67, True) is None
    assert all(GPT(tiny_config('gpt2'), recompute=r).loss_chunk_bytes is None for r in RECOMPUTE if r != 'none')
    LCE = importlib.import_module("kernels.linear_cross_entropy")
    rows_of, chunks, given = LCE._chunk_rows, [], []
    monkeypatch.setattr(LCE, "_chunk_rows", lambda *args: chunks.append(rows_of(*args)) or chunks[-1])
    fused = kernels.linear_cross_entropy
    monkeypatch.setattr(kernels, "linear_cross_entropy",
                        lambda *args, **kw: given.append(kw['chunk_bytes']) or fused(*args, **kw))
    runs = []
    for chunk_bytes in (None, 104):  # the model's own; 104 bytes, the smallest chunk (8 rows)
        torch.manual_seed(0)
        model = build(tiny_config('gpt2'), 'triton', device).to(device)
        if chunk_bytes is not None:
            model.loss_chunk_bytes = chunk_bytes
        _, loss = model(*batch(device))
        loss.backward()
        runs.append([loss] + [p.grad for p in model.parameters()])
    assert given == [400 * 2**20, 104] and chunks == [32, 8]  # 2 x 15 rows: one chunk (of 32), then 8 (the last of 6)
    for one, many in zip(*runs):
        torch.testing.assert_close(many, one, rtol=1e-5, atol=1e-6)
    build(tiny_config('gpt2'), 'triton', device, recompute='mlp').to(device)(*batch(device))
    assert given[2:] == [None]

def test_the_loss_is_the_fused_op_with_triton_and_nanogpts_with_pytorch(device, monkeypatch):
    """kernels='torch' (the baselines) runs nanoGPT's unfused head and loss, not the fused op's
    fp32 reference; kernels='triton' the fused op."""
    calls = []
    for name in ("linear_cross_entropy", "unfused_cross_entropy"):
        op = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *args, op=op, name=name, **kw: calls.append(name) or op(*args, **kw))
    for setting in ("torch", "triton"):
        build(tiny_config('gpt2'), setting, device).to(device)(*batch(device))
    assert calls == ["unfused_cross_entropy", "linear_cross_entropy"]

def block_matrix_shapes(model):
    """The shapes of the blocks' weight matrices, and transposed (what F.linear's backward keeps may be the
    transposed view): a tensor of one of them, kept for the backward in bf16, is a matrix's cast copy."""
    return {tuple(s) for name, p in model.named_parameters() if name.startswith('transformer.h.') and p.dim() == 2
            for s in (p.shape, p.shape[::-1])}

@pytest.mark.parametrize("arch", ["gpt2", "llama"])
@pytest.mark.parametrize("setting", ["torch", "triton"])
def test_recompute_activation_keeps_autocasts_values_and_not_the_hidden_layer(arch, setting, device):
    """recompute='activation' under bf16 autocast, eager and traced by torch.compile (aot_eager,
    which keeps bits): the loss and every gradient over two accumulated micro-steps equal the
    plain model's bit for bit (LinearOfActivation's and LinearOfNorm's products are autograd's for
    F.linear), with the Triton kernels within bf16 rounding (the GPU's compiler may fuse the
    backward kernels' arithmetic differently with and without their outputs). On the GPU this
    also checks that those Functions' backwards run outside autocast when compiled (CPU autocast
    sums in bf16 either way). In fp32, the tensors kept for the backward (beyond the parameters)
    come to exactly one hidden layer per block fewer bytes, and with the Triton norms two of the
    stream's width fewer too; PyTorch's SwiGLU (silu(gate) * up) keeps silu(gate) as well, a second
    hidden layer. Under autocast, the block matrices' cast copies are not kept (but the attention's
    c_proj's, which goes through F.linear)."""
    runs, config = {}, tiny_config(arch)
    for mode, compiled in (('none', False), ('activation', False), ('activation', True)):
        torch.manual_seed(0)
        model = build(tiny_config(arch, bias=True), setting, device, recompute=mode).to(device)
        runs[mode, compiled] = autocast_micro_steps(model, compiled, device)[:2]
    rounding = torch.finfo(torch.bfloat16).eps / 2 if setting == 'triton' and not kernels.INTERPRET else 0  # as above
    for losses, grads in (runs['activation', False], runs['activation', True]):
        assert all(torch.equal(a, b) for a, b in zip(runs['none', False][0], losses))
        assert all(a.dtype == b.dtype and equal_but_rounding(a, b, rounding)
                   for a, b in zip(runs['none', False][1], grads))

    copies = {}  # under autocast: the block matrices' cast copies kept for the backward, by storage
    for mode in ('none', 'activation'):
        model = build(tiny_config(arch, bias=True), setting, device, recompute=mode).to(device)
        matrices = block_matrix_shapes(model)
        copies[mode] = set()

        def pack(t):
            if t.dtype == torch.bfloat16 and tuple(t.shape) in matrices:
                copies[mode].add(t.untyped_storage().data_ptr())
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast(device, dtype=torch.bfloat16):
            model(batch(device)[0])  # no targets: no loss, the same in both modes anyway
    # 'none': all four (F.linear keeps autocast's casts); 'activation': the attention's c_proj's (F.linear), and with
    # PyTorch's norms c_attn's and c_fc's too (F.linear keeps them, as it keeps the norms' outputs)
    assert len(copies['none']) == 4 * config.n_layer
    assert len(copies['activation']) == (1 if setting == 'triton' else 3) * config.n_layer

    kept = {}
    for mode in ('none', 'activation'):
        model = build(tiny_config(arch, bias=True), setting, device, recompute=mode).to(device)
        parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}  # held anyway
        storages = {}  # by address: views of one tensor, or one tensor kept twice, count once

        def pack(t):
            if t.untyped_storage().data_ptr() not in parameters:
                storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(batch(device)[0])
        kept[mode] = sum(storages.values())
    B, T = batch(device)[0].shape
    hidden_layers = 2 if arch == 'llama' and setting == 'torch' else 1
    norm_outputs = 2 if setting == 'triton' else 0  # each block's two, made again by the Triton norm (LinearOfNorm)
    assert kept['none'] - kept['activation'] == config.n_layer * B * T * (
        hidden_layers * config.mlp_hidden + norm_outputs * config.n_embd) * 4

def test_architectures_differ_as_specified():
    gpt2 = GPT(tiny_config('gpt2', bias=True))
    llama = GPT(tiny_config('llama'))
    names = dict(gpt2.named_parameters())
    assert 'transformer.wpe.weight' in names and 'transformer.h.0.ln_1.bias' in names
    assert gpt2.lm_head.weight is gpt2.transformer.wte.weight and llama.lm_head.weight is llama.transformer.wte.weight
    lnames = dict(llama.named_parameters())
    assert 'transformer.wpe.weight' not in lnames and not any(n.endswith('.bias') for n in lnames)
    hs = 64 // 4
    assert lnames['transformer.h.0.attn.c_attn.weight'].shape == ((4 + 2 * 2) * hs, 64)  # GQA: 2 kv heads
    assert lnames['transformer.h.0.mlp.c_fc.weight'].shape[0] == 2 * 192  # SwiGLU gate and up, 8/3 x 64 rounded to 64
    assert tiny_config('llama').mlp_hidden == 192 and tiny_config('gpt2').mlp_hidden == 4 * 64
    assert names['transformer.h.0.mlp.c_fc.weight'].shape[0] == 4 * 64
    norms = lambda m: [m.transformer.ln_f] + [n for b in m.transformer.h for n in (b.ln_1, b.ln_2)]
    assert all(isinstance(n, Norm) and n.is_rms and n.op == 'rms_norm' for n in norms(llama))
    assert all(isinstance(n, Norm) and not n.is_rms and n.op == 'layer_norm' for n in norms(gpt2))
    with pytest.raises(ValueError, match="arch must be one of"):
        tiny_config('gpt3')

@pytest.mark.parametrize("setting", ["torch", "triton"])
@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_each_norm_runs_the_implementation_its_op_is_given(arch, setting, device, monkeypatch):
    """Norm.of: the architecture's norm op from the map, for every norm of the model, each call made with it."""
    op = 'rms_norm' if arch == 'llama' else 'layer_norm'
    model = build(tiny_config(arch), setting, device).to(device)
    norms = [model.transformer.ln_f] + [n for b in model.transformer.h for n in (b.ln_1, b.ln_2)]
    assert model.kernels[op] == setting and all(n.backend == setting for n in norms)
    calls, plain = [], getattr(kernels, op)
    monkeypatch.setattr(kernels, op,
                        lambda *a, backend, **kw: calls.append(backend) or plain(*a, backend=backend, **kw))
    model.eval()  # the norms called as modules (Norm.linear's LinearOfNorm is for recompute)
    model(batch(device)[0])
    assert calls == [setting] * len(norms)

@pytest.mark.parametrize("bias, gelu, recompute, gelu_mlp, one_op", [
    (False, 'tanh', 'none', True, True), (False, 'tanh', 'mlp', True, True),
    (False, 'tanh', 'activation', True, False),  # LinearOfNorm and LinearOfActivation: GELU's output not kept
    (True, 'tanh', 'none', False, False), (False, 'none', 'none', False, False)])  # cuBLASLt: no bias here, no erf form
def test_the_mlp_is_gelu_mlp_only_where_the_epilogues_have_it(bias, gelu, recompute, gelu_mlp, one_op, device,
                                                             monkeypatch):
    """GPTConfig.gelu_mlp: GPT-2 with GELU's tanh form and no biases, whose MLP with the Triton GELU is
    kernels.gelu_mlp, one op (GELU in cuBLASLt's epilogues), in training, but not with recompute='activation'.
    Elsewhere, and in sampling, the GELU kernel's pass between the products."""
    config = tiny_config('gpt2', bias=bias, gelu_approximate=gelu)
    assert config.gelu_mlp == gelu_mlp and not tiny_config('llama', gelu_approximate=gelu).gelu_mlp
    model = build(config, 'triton', device, recompute=recompute).to(device)
    assert all(block.mlp.one_op == one_op for block in model.transformer.h)
    calls = []
    monkeypatch.setattr(kernels, 'gelu_mlp', lambda *a, **k: calls.append('mlp') or kernels.gelu_mlp_ref(*a[:3]))
    gelu_pass = kernels.gelu
    # the GELU kernel's pass of its own
    monkeypatch.setattr(kernels, 'gelu', lambda *a, **k: calls.append('gelu') or gelu_pass(*a, **k))
    x, y = batch(device)
    _, loss = model(x, y)
    loss.backward()
    # two blocks ('mlp' runs the MLP again in the backward)
    expected = ['mlp'] * (4 if recompute == 'mlp' else 2) if one_op else ['gelu', 'gelu']
    assert calls == expected
    model.eval()  # sampling: each new length would be a new product for matmul_plan to measure
    model(x[:, :5])
    assert calls == expected + ['gelu', 'gelu']
    assert not build(config, 'torch', device).transformer.h[0].mlp.one_op
    with pytest.raises(ValueError, match="gelu_approximate must be one of"):
        tiny_config('gpt2', gelu_approximate='erf')

def test_sequence_longer_than_block_size_is_refused():
    model = GPT(tiny_config('gpt2'))
    with pytest.raises(ValueError, match="block_size is 32"):
        model(torch.zeros(1, 33, dtype=torch.long))

@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_kernels_on_and_off_agree(arch, device, capsys):
    """Same init, same batch: kernels='triton' and kernels='torch' give the same loss and
    gradients (fp32), and the same parameter names, so checkpoints move between them."""
    models, grads = {}, {}
    for setting in ('torch', 'triton'):
        torch.manual_seed(0)
        model = models[setting] = build(tiny_config(arch), setting, device).to(device)
        _, loss = model(*batch(device))
        loss.backward()
        grads[setting] = (loss.item(), {n: p.grad for n, p in model.named_parameters()})
    out = capsys.readouterr().out
    if arch == 'gpt2':
        assert "kernels: layer_norm=triton" in out and "kernels: layer_norm=torch" in out
    assert grads['torch'][0] == pytest.approx(grads['triton'][0], abs=1e-5)
    assert grads['torch'][1].keys() == grads['triton'][1].keys()
    for name, g in grads['torch'][1].items():
        torch.testing.assert_close(grads['triton'][1][name], g, rtol=1e-4, atol=1e-5, msg=name)
    # a checkpoint of one loads into the other
    models['triton'].load_state_dict(models['torch'].state_dict())

@pytest.mark.parametrize("gelu, recompute", [("none", "none"), ("tanh", "none"), ("tanh", "activation")])
def test_compile_model_gives_eagers_loss_and_gradients(gelu, recompute, device):
    """compile_model, as train.py compiles (the embeddings, each block and the head), gives the eager model's loss
    and gradients within fp32 rounding: with the Triton kernels on CUDA (with GELU's tanh form and no biases,
    the MLP as kernels.gelu_mlp's opaque cuBLASLt ops too, or with recompute='activation' LinearOfNorm's and
    LinearOfActivation's); on the CPU (no Inductor for the interpreter's kernels) with PyTorch's ops."""
    setting = 'triton' if device == 'cuda' else 'torch'
    torch.manual_seed(0)
    model = build(tiny_config('gpt2', bias=gelu == 'none', gelu_approximate=gelu), setting, device,
                  recompute=recompute).to(device)

    def loss_and_grads():
        _, loss = model(*batch(device))
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad(set_to_none=True)
        return loss.detach(), grads
    torch._dynamo.reset()
    eager = loss_and_grads()
    compile_model(model)
    loss, grads = loss_and_grads()
    torch.testing.assert_close(loss, eager[0], rtol=1e-5, atol=0)
    for g, ref in zip(grads, eager[1]):
        torch.testing.assert_close(g, ref, rtol=1e-4, atol=1e-6)
    if recompute == 'activation':  # autograd Functions in the graphs (LinearOfNorm's, LinearOfActivation's):
        counters = torch._dynamo.utils.counters['aot_autograd']  # compiled again, each graph is read from
        counters.clear()  # AOTAutograd's cache: the embeddings', the first block's, the other blocks', the head's
        torch._dynamo.reset()
        loss_and_grads()
        assert counters['autograd_cache_hit'] == 4 and counters['autograd_cache_bypass'] == 0, dict(counters)

@pytest.mark.parametrize("recompute", RECOMPUTE)
@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_compile_model_builds_one_graph_for_every_block(arch, recompute, device, monkeypatch):
    """compile_model hands Inductor four graphs whatever the depth (the embeddings', the first block's, which
    has no update to add, one that every other block runs, the head's): a cold start compiles two blocks, not
    the whole depth."""
    import torch._inductor.compile_fx
    graphs = []

    def record(gm, example_inputs, **kwargs):
        graphs.append(gm)
        return gm.forward
    monkeypatch.setattr(torch._inductor.compile_fx, 'compile_fx', record)
    for n_layer in (2, 5):
        torch._dynamo.reset()
        graphs.clear()
        config = dataclasses.replace(tiny_config(arch), n_layer=n_layer)
        model = build(config, 'torch', device, recompute=recompute).to(device)
        compile_model(model)(*batch(device))[1].backward()
        assert len(graphs) == 4, (n_layer, [g.code for g in graphs])
    torch._dynamo.reset()

@pytest.mark.skipif(not torch.cuda.is_available(), reason="only on CUDA does torch.compile trace the kernels' launches")
@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_tracing_again_records_no_kernel_again(arch, monkeypatch):
    """torch.compile records each Triton kernel once however often it traces their launchers (kernels.backend.launch):
    Inductor writes out every recorded kernel for each graph it compiles, so records that grow with each trace
    cost a cold start seconds. Without the caches, the second compile traces everything again."""
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table
    import torch._inductor.config
    monkeypatch.setattr(torch._inductor.config, 'fx_graph_cache', False)
    monkeypatch.setattr(torch._functorch.config, 'enable_autograd_cache', False)
    recorded = []
    for _ in range(2):
        torch._dynamo.reset()
        model = build(tiny_config(arch), 'triton', 'cuda').to('cuda')
        compile_model(model)(*batch('cuda'))[1].backward()
        recorded.append(len(kernel_side_table.id_to_kernel))
    assert recorded[0] == recorded[1], recorded
    torch._dynamo.reset()

def test_kernel_choice_is_made_once_and_explained(monkeypatch):
    """resolve's map covers the ops of the architecture and the optimizer; a setting it does not know, or
    kernels='triton' where Triton cannot run, is refused with the reason; 'auto' there is PyTorch's."""
    gpt2 = tiny_config('gpt2')
    assert resolve('torch', gpt2, 'cuda') == dict.fromkeys(ARCH_OPS['gpt2'], 'torch')
    assert set(ARCH_OPS['gpt2']) == {'layer_norm', 'gelu', 'attention', 'cross_entropy', 'optimizer'}
    with pytest.raises(ValueError, match="kernels must be one of"):
        resolve('fast', gpt2, 'cuda')
    monkeypatch.setattr(kernels.backend, 'INTERPRET', False)
    assert resolve('auto', gpt2, 'cpu') == resolve('torch', gpt2, 'cpu')
    with pytest.raises(ValueError, match=r"kernels='triton' cannot run: tensors on cpu need CUDA \(or TRITON_INTERP"):
        resolve('triton', gpt2, 'cpu')
    monkeypatch.setattr(kernels.backend, 'TRITON_AVAILABLE', False)
    assert resolve('auto', gpt2, 'cuda') == resolve('torch', gpt2, 'cuda')
    with pytest.raises(ValueError, match="kernels='triton' cannot run: Triton is not installed"):
        resolve('triton', gpt2, 'cuda')

def test_auto_keeps_the_slower_kernels_and_triton_attention_has_no_dropout(monkeypatch):
    monkeypatch.setattr(choose, 'why_not_triton_on', lambda device_type: None)  # as on a GPU
    llama, gpt2 = tiny_config('llama'), tiny_config('gpt2')
    # nothing measured: SDPA, PyTorch's LayerNorm and GELU are the faster ones (choose.AUTO_KEEPS_TORCH)
    impl = resolve('auto', llama, 'cuda')
    assert impl['attention'] == 'torch' and impl['rms_norm'] == 'triton' and impl['optimizer'] == 'triton'
    assert resolve('auto', gpt2, 'cuda') == dict(layer_norm='torch', gelu='torch', attention='torch',
                                                cross_entropy='triton', optimizer='triton')
    # measured: each op as measured, these too
    measured = dict(layer_norm='triton', gelu='triton', attention='triton', cross_entropy='torch')
    assert resolve('auto', gpt2, 'cuda', measured=measured) == dict(measured, optimizer='triton')
    assert resolve('triton', llama, 'cuda')['attention'] == 'triton'
    with pytest.raises(ValueError, match="kernels='triton' cannot run: the Triton attention has no dropout"):
        resolve('triton', tiny_config('llama', dropout=0.1), 'cuda')
    # 'auto' with dropout: SDPA, whatever was measured, without an error
    assert resolve('auto', tiny_config('gpt2', dropout=0.1), 'cuda', measured=measured)['attention'] == 'torch'

def test_per_op_overrides_win_over_the_setting(monkeypatch):
    monkeypatch.setattr(kernels.backend, 'TRITON_AVAILABLE', True)
    monkeypatch.setattr(kernels.backend, 'INTERPRET', False)
    gpt2, llama = tiny_config('gpt2'), tiny_config('llama', dropout=0.1)
    impl = resolve('torch', gpt2, 'cuda', overrides=dict(mlp=True, attention=None))
    assert impl == dict(layer_norm='torch', gelu='triton', attention='torch', cross_entropy='torch', optimizer='torch')
    impl = resolve('triton', llama, 'cuda', overrides=dict(mlp=False, attention=False))
    assert impl == dict(rms_norm='triton', rotary='triton', swiglu='torch', attention='torch', cross_entropy='triton',
                        optimizer='triton')
    impl = resolve('auto', gpt2, 'cuda', overrides=dict(layer_norm=True, cross_entropy=False),
                   measured=dict(layer_norm='torch', cross_entropy='triton'))
    assert impl == dict(layer_norm='triton', gelu='torch', attention='torch', cross_entropy='torch', optimizer='triton')
    with pytest.raises(ValueError, match="use_triton_attention=True cannot run: the Triton attention has no dropout"):
        resolve('torch', tiny_config('gpt2', dropout=0.1), 'cuda', overrides=dict(attention=True))
    with pytest.raises(ValueError, match="use_triton_rotary=True cannot run: tensors on cpu need CUDA"):
        resolve('auto', tiny_config('llama'), 'cpu', overrides=dict(rotary=True))
    with pytest.raises(ValueError, match="unknown kernel overrides"):
        resolve('auto', gpt2, 'cuda', overrides=dict(norm=True))

@pytest.mark.parametrize("arch, gelu, recompute", [("gpt2", "none", "none"), ("gpt2", "tanh", "none"),
                                                   ("gpt2", "tanh", "activation"), ("llama", "none", "none")])
@pytest.mark.parametrize("autocast_residual", [False, True])
def test_bf16_training_step_kernels_on_and_off_agree(arch, gelu, recompute, autocast_residual, device):
    """Two training steps under bf16 autocast (forward, backward, AdamW) with every op
    swapped and with none, the residual stream in fp32 or (autocast_residual) in bf16.
    GPT-2 with GELU's tanh form has no biases: its MLP is then kernels.gelu_mlp, GELU in the matmuls'
    epilogues (with recompute='activation', LinearOfNorm and LinearOfActivation with the GELU kernel).
    Three-way, as in the kernel tests: against the same steps in fp32 with PyTorch's ops,
    the Triton run's losses and first gradients are at most twice as far off as the
    PyTorch bf16 run's, plus one bf16 unit of their size. (Weights after an AdamW step
    are not compared one by one: its first update is about lr * sign(grad), which
    rounding flips where a gradient is near zero.)"""
    def run(setting, autocast):
        torch.manual_seed(0)
        model = build(tiny_config(arch, bias=gelu == 'none', gelu_approximate=gelu), setting, device,
                      autocast_residual=autocast_residual, recompute=recompute).to(device)
        assert model.transformer.h[0].mlp.one_op == (setting == 'triton' and gelu == 'tanh' and recompute == 'none')
        stream = []  # the residual stream's dtype as the second block receives it
        model.transformer.h[1].register_forward_pre_hook(lambda module, args: stream.append(args[0].dtype))
        optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), device)
        assert optimizer.backend == setting
        out = {}
        for step in range(2):
            with torch.autocast(device, dtype=torch.bfloat16, enabled=autocast):
                _, loss = model(*batch(device))
            loss.backward()
            out[f'loss {step}'] = loss.detach().reshape(1)
            if step == 0:
                out.update({'grad ' + n: p.grad.clone() for n, p in model.named_parameters()})
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        assert set(stream) == {torch.bfloat16 if autocast and autocast_residual else torch.float32}
        return out

    ref, torch_bf16, triton_bf16 = run('torch', False), run('torch', True), run('triton', True)
    eps = torch.finfo(torch.bfloat16).eps
    for name, r in ref.items():
        r = r.double()
        err_torch = (torch_bf16[name].double() - r).norm().item()
        err_triton = (triton_bf16[name].double() - r).norm().item()
        assert err_triton <= 2 * err_torch + eps * r.norm().item(), \
            f"{name}: Triton bf16 off by {err_triton:.3e}, PyTorch bf16 by {err_torch:.3e}"

def block_matrices(model):
    """The blocks' four weight matrices each, named one by one."""
    return [w for block in model.transformer.h for w in (block.attn.c_attn.weight, block.attn.c_proj.weight,
                                                         block.mlp.c_fc.weight, block.mlp.c_proj.weight)]

def micro_step_with_copies(config, copies, dtype, compiled, device):
    """A Triton model of config (seed 0) and its AdamW, keeping the block matrices' copies in dtype if copies, through
    one micro-step under dtype's autocast, eager or traced by torch.compile (aot_eager, which keeps bits). Returns
    (the model, its optimizer, the model as stepped, the loss, the gradients)."""
    torch.manual_seed(0)
    model = build(config, 'triton', device).to(device)
    optimizer = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device,
                                           matmul_dtype=dtype if copies else None)
    if compiled:  # afresh: past Dynamo's recompile limit GPT.forward would run eager unnoticed
        torch._dynamo.reset()
    stepped = torch.compile(model, backend='aot_eager') if compiled else model
    with torch.autocast(device, dtype=dtype):
        _, loss = stepped(*batch(device))
    loss.backward()  # one micro-step: autocast's gradient is then one rounding from the fp32 sums
    return model, optimizer, stepped, loss.detach(), [p.grad for p in model.parameters()]

@pytest.mark.parametrize("arch, gelu, compiled, dtype", [
    ("gpt2", "none", False, torch.bfloat16), ("gpt2", "none", True, torch.bfloat16),
    ("llama", "none", False, torch.bfloat16), ("gpt2", "tanh", False, torch.bfloat16),
    ("gpt2", "none", False, torch.float16)])
def test_matmul_copies_keep_autocasts_values(arch, gelu, compiled, dtype, device):
    """AdamW keeping the block matrices' copies in autocast's dtype (configure_optimizers' matmul_dtype), eager and
    traced by torch.compile (aot_eager, which keeps bits), against the same model without them, under autocast: the
    loss and every gradient but the matrices' equal bit for bit; each matrix's gradient, summed in fp32 and not
    rounded to autocast's dtype, within half a unit of that dtype of autocast's (plus fp32 sums' order), and not the
    dtype's own values; after AdamW's step every copy is its weight's cast bit for bit, and the next loss through
    the copies equals the one through autocast's casts, and other copies give the loss of weights equal to them
    (the products read the copies: kernels/linear.py). load_state_dict makes the copies again; Muon drops them;
    nanoGPT's baseline (kernels='torch', torch's AdamW) and a model with any recompute get none. gelu_mlp's MLP
    (GELU's tanh form) reads its two's copies too."""
    config = tiny_config(arch, gelu_approximate=gelu, bias=gelu != 'tanh')  # with a bias, except gelu_mlp's (none)
    plain, _, plain_stepped, plain_loss, plain_grads = micro_step_with_copies(config, False, dtype, compiled, device)
    model, optimizer, stepped, loss, grads = micro_step_with_copies(config, True, dtype, compiled, device)
    kept = [p for p in model.parameters() if hasattr(p, 'matmul_copy')]  # none for the head, the norms, the biases
    assert list(map(id, kept)) == list(map(id, block_matrices(model))) and len(kept) == 4 * config.n_layer
    assert all(w.matmul_copy.dtype == dtype for w in kept)
    assert all(block.mlp.one_op == (gelu == 'tanh') for block in model.transformer.h)
    assert not any(hasattr(w, 'matmul_copy') for w in plain.parameters())
    assert torch.equal(plain_loss, loss)
    matrices = set(map(id, block_matrices(model)))
    for p, a, b in zip(model.parameters(), plain_grads, grads):
        assert a.dtype == b.dtype == torch.float32
        if id(p) not in matrices:
            assert torch.equal(a, b)
        else:
            unit = torch.finfo(dtype)  # half a unit of the dtype, or of its subnormals' spacing (fp16's)
            assert ((b - a).abs() <= torch.clamp(b.abs(), min=unit.tiny) * unit.eps / 2 + 1e-6 * b.abs().max()).all()
            assert not torch.equal(b, b.to(dtype).float())  # fp32 sums, not the dtype's

    optimizer.step()
    assert all(torch.equal(w.matmul_copy, w.detach().to(dtype)) for w in kept)
    x, y = batch(device)
    with torch.no_grad(), torch.autocast(device, dtype=dtype):
        through_copies = stepped(x, y)[1]
        plain.load_state_dict(model.state_dict())
        through_casts = plain_stepped(x, y)[1]
    assert torch.equal(through_copies, through_casts)
    with torch.no_grad():  # the products read the copies: other copies, the loss of weights equal to them
        for w in kept:
            w.matmul_copy.copy_(torch.randn_like(w.matmul_copy) * 0.02)
        for w, p in zip(block_matrices(model), block_matrices(plain)):
            p.copy_(w.matmul_copy.float() if hasattr(w, 'matmul_copy') else w)
        with torch.autocast(device, dtype=dtype):
            assert torch.equal(stepped(x, y)[1], plain_stepped(x, y)[1])
            assert not torch.equal(stepped(x, y)[1], through_copies)

    state = {k: v + 0.5 if k.endswith('c_fc.weight') else v for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    assert all(torch.equal(w.matmul_copy, w.detach().to(dtype)) for w in kept)
    model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device, muon=dict(lr=0.02), matmul_dtype=torch.bfloat16)
    assert not any(hasattr(w, 'matmul_copy') for w in model.parameters())
    for setting, recompute in [('torch', 'none')] + [('triton', r) for r in RECOMPUTE if r != 'none']:
        other = build(config, setting, device, recompute=recompute).to(device)
        other.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device, matmul_dtype=torch.bfloat16)
        assert not any(hasattr(w, 'matmul_copy') for w in other.parameters())

@pytest.mark.parametrize("arch, compiled", [("gpt2", False), ("llama", False), ("gpt2", True)])
def test_fp8_products(arch, compiled, device, monkeypatch):
    """fp8=True: each product that reads a kept copy runs in fp8 (kernels/linear.py's Fp8LinearOfCopy: x and the copy
    cast row-wise forward, dy and the copy's transpose backward), eager and traced by torch.compile (aot_eager), so
    the model's loss and gradients stay near bf16's (e4m3 keeps 3 mantissa bits: within 1% of the loss, every
    gradient's cosine to bf16's above 0.99) but are not bf16's. GELU's tanh form then runs as two products around
    the GELU kernel, not as the one op. Where the products cannot run in fp8 (no copies kept: recompute, Muon, no
    autocast; widths not multiples of 16) configure_optimizers says why."""
    config = tiny_config(arch)
    runs = {}
    for fp8 in (False, True):
        torch.manual_seed(0)
        model = build(config, 'triton', device, fp8=fp8).to(device)
        model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device, matmul_dtype=torch.bfloat16)
        counts = count_launches(monkeypatch, rowwise)
        if compiled:  # afresh: past Dynamo's recompile limit GPT.forward would run eager unnoticed
            torch._dynamo.reset()
        stepped = torch.compile(model, backend='aot_eager') if compiled else model
        with torch.autocast(device, dtype=torch.bfloat16):
            _, loss = stepped(*batch(device))
        loss.backward()
        runs[fp8] = loss.detach(), [p.grad for p in model.parameters()], counts['_rowwise_fp8_kernel']
    (loss16, grads16, casts16), (loss8, grads8, casts8) = runs[False], runs[True]
    assert casts16 == 0 and casts8 == 4 * config.n_layer * 4  # 4 products a block, 2 casts forward and 2 backward
    assert loss8 != loss16 and abs(loss8 - loss16) <= 0.01 * loss16
    for a, b in zip(grads16, grads8):
        assert torch.isfinite(b).all() and F.cosine_similarity(a.flatten(), b.flatten(), dim=0) > 0.99
    if compiled or arch != 'gpt2':
        return
    tanh = build(tiny_config('gpt2', gelu_approximate='tanh', bias=False), 'triton', device, fp8=True).to(device)
    tanh.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device, matmul_dtype=torch.bfloat16)
    counts = count_launches(monkeypatch, rowwise)
    with torch.autocast(device, dtype=torch.bfloat16):
        tanh(*batch(device))[1].backward()
    assert not any(block.mlp.one_op for block in tanh.transformer.h) and counts['_rowwise_fp8_kernel'] == 32
    narrow = GPTConfig(block_size=32, vocab_size=67, n_layer=1, n_head=4, n_embd=40)  # widths 40, 120, 160
    for kw, optim, why in [(dict(recompute='activation'), {}, "keeps none"),
                           ({}, dict(muon=dict(lr=0.02)), "keeps none"), ({}, dict(matmul_dtype=None), "keeps none"),
                           (dict(config=narrow), {}, "multiples of 16")]:
        model = build(kw.pop('config', config), 'triton', device, fp8=True, **kw).to(device)
        with pytest.raises(ValueError, match=f"fp8=True: .*{why}"):
            model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device, **(dict(matmul_dtype=torch.bfloat16) | optim))
