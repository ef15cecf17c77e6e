"""GPT forward/backward for both architectures, and the kernel swap: the same
parameter names and the same loss and gradients with the Triton kernels on and off."""
import collections
import importlib
import math

import pytest
import torch
import torch.nn.functional as F

import kernels
from model import GPT, GPTConfig, RECOMPUTE, compile_model, pick_kernels, mlp_hidden, loss_chunk_bytes as model_loss_chunk_bytes

def tiny_config(arch, **kw):
    return GPTConfig(block_size=32, vocab_size=67, n_layer=2, n_head=4, n_embd=64, arch=arch,
                     n_kv_head=2 if arch == 'llama' else None, **kw)

def batch(device, B=3, T=32, V=67):
    g = torch.Generator().manual_seed(0)
    return (torch.randint(V, (B, T), generator=g).to(device), torch.randint(V, (B, T), generator=g).to(device))

@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_forward_backward(arch, device):
    torch.manual_seed(0)
    model = GPT(tiny_config(arch), kernels='torch').to(device)
    x, y = batch(device)
    logits, loss = model(x, y)
    assert logits is None  # training: the loss only
    assert abs(loss.item() - math.log(67)) < 0.5  # near uniform at initialisation
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, name
    logits, loss = model(x)  # inference: last position only
    assert logits.shape == (3, 1, 67) and loss is None
    assert model.generate(x[:, :4], 5, temperature=0.0).shape == (3, 9)

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
            _, loss = stepped(*batch(device, B=micro_step + 1))
        loss.backward()
        losses.append(loss.detach())
    return losses, [p.grad for p in model.parameters()], stepped, loss

def equal_but_rounding(a, b, rounding):
    """a equals b bit for bit (rounding 0), or as a whole within `rounding` of b's size."""
    return torch.equal(a, b) if rounding == 0 else (a - b).norm().item() <= rounding * b.norm().item()

@pytest.mark.parametrize("arch, gelu", [("gpt2", "none"), ("gpt2", "tanh"), ("llama", "none")])
@pytest.mark.parametrize("setting", ["torch", "triton"])
@pytest.mark.parametrize("recompute", ["activation", "mlp", "block"])
def test_recompute_gives_the_same_loss_and_gradients(arch, gelu, setting, recompute, device):
    """recompute='activation' / 'mlp' / 'block' (the backward recomputes those activations) in fp32, with dropout
    (its draws replayed in the recomputation): the loss and every gradient equal the plain
    model's bit for bit, with PyTorch's ops and with the Triton kernels alike (but the Triton
    attention, which has no dropout), except 'activation' and 'mlp' with the Triton kernels (their
    norms' or activation's backward kernels write the output again): within fp32 rounding there. GPT-2 with
    GELU's tanh form (no biases) and the Triton kernels has its MLP in the matmuls' epilogues, but with
    'activation': there the two runs' MLPs are two paths, within fp32 rounding too."""
    runs = {}
    for mode in ('none', recompute):
        torch.manual_seed(0)
        model = GPT(tiny_config(arch, dropout=0.1, bias=gelu == 'none', gelu_approximate=gelu), kernels=setting,
                    device_type=device, recompute=mode,
                    overrides={'attention': False}, scatter_embedding_grad=False).to(device)  # autograd's sum: no atomics on CUDA
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
    rewritten = recompute in ('activation', 'mlp') and setting == 'triton' and not kernels.INTERPRET or two_paths
    rounding = rounding if rewritten else 0
    assert all(equal_but_rounding(a, b, rounding) for a, b in zip(runs['none'][1], runs[recompute][1]))
    with pytest.raises(ValueError, match="recompute must be one of"):
        GPT(tiny_config(arch), kernels='torch', recompute='attention')

def test_loss_chunk_reaches_the_loss_and_changes_only_rounding(device, monkeypatch):
    """loss_chunk_mib is the fused loss's chunk (by default without recompute 400 MiB, or 4096 rows
    where those are more; the op's own default with recompute); 8-row chunks give one chunk's loss
    and gradients but for fp32 rounding."""
    assert GPT(tiny_config('gpt2'), kernels='torch').loss_chunk_bytes == 400 * 2**20
    assert model_loss_chunk_bytes('none', 131072) == 4096 * 131072 * 2  # 1 GiB: a LLaMA-3-sized vocabulary
    assert GPT(tiny_config('gpt2'), kernels='torch', recompute='mlp').loss_chunk_bytes is None
    for bad in (0, -1, '64'):
        with pytest.raises(ValueError, match="loss_chunk_mib must be a positive number"):
            GPT(tiny_config('gpt2'), kernels='torch', loss_chunk_mib=bad)
    LCE = importlib.import_module("kernels.linear_cross_entropy")
    rows_of, chunks = LCE._chunk_rows, []
    monkeypatch.setattr(LCE, "_chunk_rows", lambda *args: chunks.append(rows_of(*args)) or chunks[-1])
    runs = []
    for mib in (None, 1e-4):  # 1e-4 MiB: 104 bytes, the smallest chunk (8 rows)
        torch.manual_seed(0)
        model = GPT(tiny_config('gpt2'), kernels='triton', loss_chunk_mib=mib).to(device)
        _, loss = model(*batch(device))
        loss.backward()
        runs.append([loss] + [p.grad for p in model.parameters()])
    assert chunks == [96, 8]  # 3 x 32 rows in one chunk, then in 12
    for one, many in zip(*runs):
        torch.testing.assert_close(many, one, rtol=1e-5, atol=1e-6)

def test_the_loss_is_the_fused_op_with_triton_and_nanogpts_with_pytorch(device, monkeypatch):
    """kernels='torch' (the baselines) runs nanoGPT's unfused head and loss, not the fused op's
    fp32 reference; kernels='triton' the fused op."""
    calls = []
    for name in ("linear_cross_entropy", "unfused_cross_entropy"):
        op = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *args, op=op, name=name, **kw: calls.append(name) or op(*args, **kw))
    for setting in ("torch", "triton"):
        GPT(tiny_config('gpt2'), kernels=setting).to(device)(*batch(device))
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
        model = GPT(tiny_config(arch, bias=True), kernels=setting, device_type=device, recompute=mode,
                    scatter_embedding_grad=False).to(device)  # autograd's sum: no atomics on CUDA
        runs[mode, compiled] = autocast_micro_steps(model, compiled, device)[:2]
    rounding = torch.finfo(torch.bfloat16).eps / 2 if setting == 'triton' and not kernels.INTERPRET else 0  # as in the test above
    for losses, grads in (runs['activation', False], runs['activation', True]):
        assert all(torch.equal(a, b) for a, b in zip(runs['none', False][0], losses))
        assert all(a.dtype == b.dtype and equal_but_rounding(a, b, rounding) for a, b in zip(runs['none', False][1], grads))

    copies = {}  # under autocast: the block matrices' cast copies kept for the backward, by storage
    for mode in ('none', 'activation'):
        model = GPT(tiny_config(arch, bias=True), kernels=setting, device_type=device, recompute=mode).to(device)
        matrices = block_matrix_shapes(model)
        copies[mode] = set()

        def pack(t):
            if t.dtype == torch.bfloat16 and tuple(t.shape) in matrices:
                copies[mode].add(t.untyped_storage().data_ptr())
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast(device, dtype=torch.bfloat16):
            model(*batch(device))
    # 'none': all four (CastMatrices); 'activation': the attention's c_proj's (F.linear), and with PyTorch's
    # norms c_attn's and c_fc's too (F.linear keeps them, as it keeps the norms' outputs)
    assert len(copies['none']) == 4 * config.n_layer
    assert len(copies['activation']) == (1 if setting == 'triton' else 3) * config.n_layer

    kept = {}
    for mode in ('none', 'activation'):
        model = GPT(tiny_config(arch, bias=True), kernels=setting, device_type=device, recompute=mode).to(device)
        parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}  # held anyway
        storages = {}  # by address: views of one tensor, or one tensor kept twice, count once

        def pack(t):
            if t.untyped_storage().data_ptr() not in parameters:
                storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(*batch(device))
        kept[mode] = sum(storages.values())
    B, T = batch(device)[0].shape
    hidden_layers = 2 if arch == 'llama' and setting == 'torch' else 1
    norm_outputs = 2 if setting == 'triton' else 0  # each block's two, made again by the Triton norm (LinearOfNorm)
    assert kept['none'] - kept['activation'] == config.n_layer * B * T * (
        hidden_layers * mlp_hidden(config) + norm_outputs * config.n_embd) * 4


def backward_nodes(tensor):
    """The nodes of tensor's backward graph."""
    seen, todo = set(), [tensor.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and node not in seen:
            seen.add(node)
            todo.extend(next_node for next_node, _ in node.next_functions)
    return seen

def autograd_nodes(tensor):
    """Counter of the node names in tensor's backward graph."""
    return collections.Counter(type(node).__name__ for node in backward_nodes(tensor))

@pytest.mark.parametrize("arch", ["gpt2", "llama"])
# the Triton kernels once (GELU then takes c_fc's bias, F.linear not), PyTorch's with each recompute
@pytest.mark.parametrize("setting, recompute", [("torch", "none"), ("torch", "block"), ("triton", "none")])
def test_cast_per_block_gives_autocasts_values_bit_for_bit(arch, setting, recompute, device):
    """cast_per_block (each block's matrices cast to bf16 together, CastMatrices) against
    autocast's per-use casts: the same loss and gradients bit for bit over two accumulated
    micro-steps, and the same logits without grad (sampling). Also traced by torch.compile
    (aot_eager, which keeps bits): a check of Block.matrices' guard, since on the GPU machine
    (torch 2.11, CUDA) the compiled graph gave zero gradients through CastMatrices; torch 2.13
    on the CPU does not. Eager, one CastMatrices node per block and four fewer per-use casts, so
    the comparison is between two different graphs. (With recompute='activation' or 'mlp' nothing
    is cast together: test_cast_per_block_leaves_to_autocast_what_it_would_not_save.)"""
    runs = {}
    for cast_per_block, compiled in ((False, False), (True, False), (True, True)):
        torch.manual_seed(0)
        model = GPT(tiny_config(arch, bias=True), kernels=setting, device_type=device, recompute=recompute,
                    cast_per_block=cast_per_block, scatter_embedding_grad=False).to(device)  # as in the test above
        losses, grads, stepped, loss = autocast_micro_steps(model, compiled, device)
        with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16):
            logits, _ = stepped(batch(device)[0])
        runs[cast_per_block, compiled] = losses, grads, logits, autograd_nodes(loss)
    losses0, grads0, logits0, nodes0 = runs[False, False]
    for losses, grads, logits, _ in (runs[True, False], runs[True, True]):
        assert all(torch.equal(a, b) for a, b in zip(losses0, losses))
        assert all(a.dtype == b.dtype == torch.float32 and torch.equal(a, b) for a, b in zip(grads0, grads))
        assert torch.equal(logits0, logits)
    nodes1, n_layer = runs[True, False][3], tiny_config(arch).n_layer
    assert nodes0['CastMatricesBackward'] == 0 and nodes1['CastMatricesBackward'] == n_layer
    assert nodes0['ToCopyBackward0'] - nodes1['ToCopyBackward0'] == 4 * n_layer

@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_scatter_embedding_grad_adds_the_rows_into_the_heads_gradient(arch, device):
    """scatter_embedding_grad against autograd's sum of the tied matrix's two gradients, under autocast with the
    fused loss, eager and compiled (aot_eager, which keeps bits): the same loss and the same gradients, but for
    the tied matrix's, where the looked-up rows are added one by one into the head's gradient instead of summed
    by token first, in the order their atomic adds land on CUDA (fp32 rounding apart). Eager, TiedEmbedding's
    node hands on the very tensor the head's gradient came in, filled in place, not a copy. Compiled there is
    no node to look at; on the CPU (no atomics) its tied gradient has the eager scatter's bits, not the sum's."""
    runs = {}
    for scatter, compiled in ((False, False), (True, False), (True, True)):
        torch.manual_seed(0)
        model = GPT(tiny_config(arch), kernels='triton' if kernels.TRITON_AVAILABLE else 'torch', device_type=device,
                    scatter_embedding_grad=scatter).to(device)
        if compiled:
            torch._dynamo.reset()
        with torch.autocast(device, dtype=torch.bfloat16):
            _, loss = (torch.compile(model, backend='aot_eager') if compiled else model)(*batch(device))
        tied_nodes = [node for node in backward_nodes(loss) if type(node).__name__ == 'TiedEmbeddingBackward']
        in_place = []  # per TiedEmbedding node: is the gradient it hands on the head's, filled in place?
        for node in tied_nodes:
            node.register_hook(lambda grad_inputs, grad_outputs:
                               in_place.append(grad_inputs[0].data_ptr() == grad_outputs[1].data_ptr()))
        loss.backward()
        runs[scatter, compiled] = loss.detach(), [p.grad for p in model.parameters()], in_place
    tied = [name for name, _ in model.named_parameters()].index('transformer.wte.weight')
    (loss0, grads0, nodes0), (loss1, grads1, nodes1), (loss2, grads2, nodes2) = runs.values()
    assert (nodes0, nodes1, nodes2) == ([], [True], [])
    assert torch.equal(loss0, loss1) and torch.equal(loss1, loss2)
    for grads in (grads1, grads2):
        assert all(torch.equal(a, b) for i, (a, b) in enumerate(zip(grads0, grads)) if i != tied)
        torch.testing.assert_close(grads[tied], grads0[tied], rtol=1e-5, atol=1e-7)
    if device == 'cpu':
        assert torch.equal(grads2[tied], grads1[tied]) and not torch.equal(grads2[tied], grads0[tied])


def test_cast_per_block_leaves_to_autocast_what_it_would_not_save(device):
    """Block.matrices hands autocast the stored matrices without grad (autocast casts each once
    per region), where one of them is frozen (all four would ask for weight gradients) and with
    recompute (the Functions and the recomputed MLP cast again in the backward)."""
    block = GPT(tiny_config('gpt2'), kernels='torch').to(device).transformer.h[0]
    stored = (block.attn.c_attn.weight, block.attn.c_proj.weight, block.mlp.c_fc.weight, block.mlp.c_proj.weight)
    x = torch.zeros(1, 1, 64, device=device)
    with torch.autocast(device, dtype=torch.bfloat16):
        assert all(w.dtype == torch.bfloat16 for w in block.matrices(x, 'none'))
        for recompute in ('activation', 'mlp'):
            assert all(w is p for w, p in zip(block.matrices(x, recompute), stored))
        with torch.no_grad():
            assert all(w is p for w, p in zip(block.matrices(x, 'none'), stored))
        block.mlp.c_fc.weight.requires_grad_(False)
        assert all(w is p for w, p in zip(block.matrices(x, 'none'), stored))

def test_architectures_differ_as_specified():
    gpt2 = GPT(tiny_config('gpt2', bias=True), kernels='torch')
    llama = GPT(tiny_config('llama'), kernels='torch')
    names = dict(gpt2.named_parameters())
    assert 'transformer.wpe.weight' in names and 'transformer.h.0.ln_1.bias' in names
    assert gpt2.lm_head.weight is gpt2.transformer.wte.weight and llama.lm_head.weight is llama.transformer.wte.weight
    lnames = dict(llama.named_parameters())
    assert 'transformer.wpe.weight' not in lnames and not any(n.endswith('.bias') for n in lnames)
    hs = 64 // 4
    assert lnames['transformer.h.0.attn.c_attn.weight'].shape == ((4 + 2 * 2) * hs, 64)  # GQA: 2 kv heads
    assert lnames['transformer.h.0.mlp.c_fc.weight'].shape[0] == 2 * 192  # SwiGLU gate and up, 8/3 x 64 rounded to 64
    assert type(llama.transformer.ln_f).__name__ == 'RMSNorm'

@pytest.mark.parametrize("bias, gelu, recompute, epilogues, one_op", [
    (False, 'tanh', 'none', True, True), (False, 'tanh', 'mlp', True, True), (False, 'tanh', 'block', True, True),
    (False, 'tanh', 'activation', True, False),  # LinearOfNorm and LinearOfActivation: GELU's output not kept
    (True, 'tanh', 'none', False, False), (False, 'none', 'none', False, False)])  # cuBLASLt: no bias here, no erf form
def test_gelu_goes_into_the_matmuls_epilogues_only_where_they_have_it(bias, gelu, recompute, epilogues, one_op, device,
                                                                     monkeypatch):
    model = GPT(tiny_config('gpt2', bias=bias, gelu_approximate=gelu), kernels='triton', device_type=device,
                recompute=recompute).to(device)
    assert all(block.mlp.epilogues == epilogues and block.mlp.one_op == one_op for block in model.transformer.h)
    calls = []
    monkeypatch.setattr(kernels, 'gelu_mlp', lambda *a, **k: calls.append('mlp') or kernels.gelu_mlp_ref(*a[:3]))
    monkeypatch.setattr(kernels, 'gelu_linear_fwd', lambda x, w: calls.append('fc') or (x @ w.T, F.gelu(x @ w.T, approximate='tanh')))
    monkeypatch.setattr(kernels, 'dgelu_matmul', lambda dy, w, h: calls.append('dgelu') or
                        torch.ops.aten.gelu_backward(dy @ w, h, approximate='tanh'))
    gelu_pass = kernels.gelu
    monkeypatch.setattr(kernels, 'gelu', lambda *a, **k: calls.append('gelu') or gelu_pass(*a, **k))  # a pass of its own
    x, y = batch(device)
    _, loss = model(x, y)
    loss.backward()
    # two blocks ('mlp' and 'block' run the MLP again in the backward)
    expected = (['mlp'] * (4 if recompute in ('mlp', 'block') else 2) if one_op else
                ['fc', 'fc', 'dgelu', 'dgelu'] if epilogues else ['gelu', 'gelu'])
    assert calls == expected
    model.eval()  # sampling: each new length would be a new product for matmul_plan to measure
    model(x[:, :5])
    assert calls == expected + ['gelu', 'gelu']
    assert not GPT(tiny_config('gpt2', bias=bias, gelu_approximate=gelu), kernels='torch').transformer.h[0].mlp.epilogues
    with pytest.raises(ValueError, match="gelu_approximate must be one of"):
        tiny_config('gpt2', gelu_approximate='erf')

def test_sequence_longer_than_block_size_is_refused():
    model = GPT(tiny_config('gpt2'), kernels='torch')
    with pytest.raises(ValueError, match="block_size is 32"):
        model(torch.zeros(1, 33, dtype=torch.long))

@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_kernels_on_and_off_agree(arch, device, capsys):
    """Same init, same batch: kernels='triton' and kernels='torch' give the same loss and
    gradients (fp32), and the same parameter names, so checkpoints move between them."""
    models, grads = {}, {}
    for setting in ('torch', 'triton'):
        torch.manual_seed(0)
        model = models[setting] = GPT(tiny_config(arch), kernels=setting, device_type=device).to(device)
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
    """compile_model, as train.py compiles (Inductor with INDUCTOR_OPTIONS on top of the mode's),
    gives the eager model's loss and gradients within fp32 rounding: with the Triton kernels on
    CUDA (with GELU's tanh form and no biases, the MLP's opaque cuBLASLt ops too, as one op or, with
    recompute='activation', in LinearOfNorm and LinearOfActivation); on the CPU (no Inductor for the
    interpreter's kernels) with PyTorch's ops, default mode only."""
    setting, modes = ('triton', ['default', 'reduce-overhead']) if device == 'cuda' else ('torch', ['default'])
    torch.manual_seed(0)
    model = GPT(tiny_config('gpt2', bias=gelu == 'none', gelu_approximate=gelu), kernels=setting,
                device_type=device, recompute=recompute).to(device)
    runs = []
    for step_model in [model] + [compile_model(model, mode) for mode in modes]:
        torch._dynamo.reset()
        _, loss = step_model(*batch(device))
        loss.backward()
        runs.append((loss.detach().clone(), [p.grad.clone() for p in model.parameters()]))  # CUDA graphs reuse outputs
        model.zero_grad(set_to_none=True)
    for loss, grads in runs[1:]:
        torch.testing.assert_close(loss, runs[0][0], rtol=1e-5, atol=0)
        for g, ref in zip(grads, runs[0][1]):
            torch.testing.assert_close(g, ref, rtol=1e-4, atol=1e-6)

def test_compile_model_does_not_keep_the_matrices_casts(monkeypatch):
    """compile_model partitions with PARTITIONER_OPTIONS: under bf16 autocast the backward casts the
    block matrices again instead of keeping their bf16 casts from the forward, which torch.compile's
    defaults keep (functorch's min-cut partitioner, as Inductor runs it, with a stand-in for Inductor's
    code generation that records what the forward saves)."""
    from torch._functorch.aot_autograd import aot_module_simplified
    from functorch.compile import min_cut_rematerialization_partition, make_boxed_func
    import torch._inductor.compile_fx

    def partition_only(gm, example_inputs, **kwargs):
        def forward(fw, inputs):
            # what the forward makes and keeps; its inputs (the parameters among them) are held anyway
            saved.extend(n.meta['val'] for n in fw.graph.output_node().args[0]
                         if isinstance(n.meta.get('val'), torch.Tensor) and n.op != 'placeholder')
            return make_boxed_func(fw.forward)
        return aot_module_simplified(gm, example_inputs, fw_compiler=forward, partition_fn=min_cut_rematerialization_partition,
                                     bw_compiler=lambda bw, inputs: make_boxed_func(bw.forward))
    monkeypatch.setattr(torch._inductor.compile_fx, 'compile_fx', partition_only)
    kept, kept_bytes = {}, {}
    for name, compile in (('defaults', lambda m: torch.compile(m, backend=partition_only)), ('compile_model', compile_model)):
        torch._dynamo.reset()
        model, saved = GPT(tiny_config('gpt2'), kernels='torch', device_type='cpu'), []
        matrices = block_matrix_shapes(model)
        with torch.autocast('cpu', dtype=torch.bfloat16):
            compile(model)(*batch('cpu'))
        kept[name] = sum(t.dtype == torch.bfloat16 and tuple(t.shape) in matrices for t in saved)
        kept_bytes[name] = sum(t.numel() * t.element_size() for t in saved)
    torch._dynamo.reset()
    assert kept == {'defaults': 4 * tiny_config('gpt2').n_layer, 'compile_model': 0}
    assert kept_bytes['compile_model'] < kept_bytes['defaults']  # what else the switch remakes is kept less, not more

@pytest.mark.parametrize("recompute", RECOMPUTE)
@pytest.mark.parametrize("triton_activation", [False, True])
@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_compile_model_combines_kernels_unless_a_recomputed_region_holds_torchs_activation(arch, triton_activation, recompute,
                                                                                            device, monkeypatch):
    """compile_model asks Inductor for combo kernels, except where a recomputed checkpointed region ('mlp',
    'block') holds PyTorch's MLP activation: torch 2.11's Inductor combined the recomputed activation kernels
    of many layers there, and so made their inputs again all at once."""
    import torch._inductor.compile_fx
    asked = []

    def record(gm, example_inputs, config_patches=None, **kwargs):
        asked.append((config_patches or {}).get('combo_kernels'))
        return gm.forward
    monkeypatch.setattr(torch._inductor.compile_fx, 'compile_fx', record)
    torch._dynamo.reset()
    model = GPT(tiny_config(arch), kernels='torch', device_type=device, overrides={'mlp': triton_activation},
                recompute=recompute).to(device)
    compile_model(model)(*batch(device))
    torch._dynamo.reset()
    assert asked and set(asked) == {triton_activation or recompute not in ('mlp', 'block')}

def test_kernel_choice_is_made_once_and_explained(monkeypatch):
    assert set(pick_kernels('torch', 'gpt2', 'cuda')[0].values()) == {'torch'}
    with pytest.raises(ValueError, match="kernels must be one of"):
        pick_kernels('fast', 'gpt2', 'cuda')
    monkeypatch.setattr(kernels.backend, 'INTERPRET', False)
    assert pick_kernels('auto', 'gpt2', 'cpu') == (dict.fromkeys(pick_kernels('torch', 'gpt2', 'cpu')[0], 'torch'),
                                                   "tensors on cpu need CUDA (or TRITON_INTERPRET=1)")
    with pytest.raises(ValueError, match="need CUDA"):
        pick_kernels('triton', 'gpt2', 'cpu')
    monkeypatch.setattr(kernels.backend, 'TRITON_AVAILABLE', False)
    assert pick_kernels('auto', 'gpt2', 'cuda') == (pick_kernels('torch', 'gpt2', 'cuda')[0], 'Triton is not installed')
    with pytest.raises(ValueError, match="not installed"):
        pick_kernels('triton', 'gpt2', 'cuda')

def test_auto_keeps_the_slower_kernels_and_triton_attention_has_no_dropout():
    impl, reason = pick_kernels('auto', 'llama', 'cuda')
    if reason is None:  # SDPA, PyTorch's LayerNorm and GELU are the faster ones (model.AUTO_KEEPS_TORCH)
        assert impl['attention'] == 'torch' and impl['rms_norm'] == 'triton'
        assert pick_kernels('auto', 'gpt2', 'cuda')[0] == dict(layer_norm='torch', gelu='torch', attention='torch',
                                                             cross_entropy='triton')
    assert pick_kernels('triton', 'llama', 'cuda')[0]['attention'] == 'triton'
    with pytest.raises(ValueError, match="dropout"):
        pick_kernels('triton', 'llama', 'cuda', dropout=0.1)

def test_per_op_overrides_win_over_the_setting(monkeypatch):
    monkeypatch.setattr(kernels.backend, 'TRITON_AVAILABLE', True)
    monkeypatch.setattr(kernels.backend, 'INTERPRET', False)
    impl = pick_kernels('torch', 'gpt2', 'cuda', overrides=dict(mlp=True, attention=None))[0]
    assert impl == dict(layer_norm='torch', gelu='triton', attention='torch', cross_entropy='torch')
    impl = pick_kernels('triton', 'llama', 'cuda', dropout=0.1, overrides=dict(mlp=False, attention=False))[0]
    assert impl == dict(rms_norm='triton', rotary='triton', swiglu='torch', attention='torch', cross_entropy='triton')
    impl = pick_kernels('auto', 'gpt2', 'cuda', overrides=dict(layer_norm=True, cross_entropy=False))[0]
    assert impl == dict(layer_norm='triton', gelu='torch', attention='torch', cross_entropy='torch')
    with pytest.raises(ValueError, match="use_triton_attention=True cannot run: the Triton attention has no dropout"):
        pick_kernels('torch', 'gpt2', 'cuda', dropout=0.1, overrides=dict(attention=True))
    with pytest.raises(ValueError, match="use_triton_rotary=True cannot run: tensors on cpu need CUDA"):
        pick_kernels('auto', 'llama', 'cpu', overrides=dict(rotary=True))
    with pytest.raises(ValueError, match="unknown kernel overrides"):
        pick_kernels('auto', 'gpt2', 'cuda', overrides=dict(norm=True))

@pytest.mark.parametrize("arch, gelu, recompute", [("gpt2", "none", "none"), ("gpt2", "tanh", "none"),
                                                   ("gpt2", "tanh", "activation"), ("llama", "none", "none")])
@pytest.mark.parametrize("autocast_residual", [False, True])
def test_bf16_training_step_kernels_on_and_off_agree(arch, gelu, recompute, autocast_residual, device):
    """Two training steps under bf16 autocast (forward, backward, AdamW) with every op
    swapped and with none, the residual stream in fp32 or (autocast_residual) in bf16.
    GPT-2 with GELU's tanh form has no biases: its MLP then computes GELU in the matmuls' epilogues, as
    kernels.gelu_mlp or, with recompute='activation', in LinearOfNorm and LinearOfActivation.
    Three-way, as in the kernel tests: against the same steps in fp32 with PyTorch's ops,
    the Triton run's losses and first gradients are at most twice as far off as the
    PyTorch bf16 run's, plus one bf16 unit of their size. (Weights after an AdamW step
    are not compared one by one: its first update is about lr * sign(grad), which
    rounding flips where a gradient is near zero.)"""
    def run(setting, autocast):
        torch.manual_seed(0)
        model = GPT(tiny_config(arch, bias=gelu == 'none', gelu_approximate=gelu), kernels=setting, device_type=device,
                    autocast_residual=autocast_residual, recompute=recompute).to(device)
        assert model.transformer.h[0].mlp.epilogues == (setting == 'triton' and gelu == 'tanh')
        stream = []  # the residual stream's dtype as the second block receives it
        model.transformer.h[1].register_forward_pre_hook(lambda module, args: stream.append(args[0].dtype))
        optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), device)
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
    return [w for block in model.transformer.h for w in block.all_matrices()]

@pytest.mark.parametrize("arch, gelu, compiled, dtype", [
    ("gpt2", "none", False, torch.bfloat16), ("gpt2", "none", True, torch.bfloat16), ("llama", "none", False, torch.bfloat16),
    ("gpt2", "tanh", False, torch.bfloat16), ("gpt2", "none", False, torch.float16)])
def test_matmul_copies_keep_autocasts_values(arch, gelu, compiled, dtype, device):
    """AdamW keeping the block matrices' copies in autocast's dtype (configure_optimizers' matmul_dtype), eager and
    traced by torch.compile (aot_eager, which keeps bits), against the same model without them, under autocast: the
    loss and every gradient but the matrices' equal bit for bit; each matrix's gradient, summed in fp32 and not
    rounded to autocast's dtype, within half a unit of that dtype of autocast's (plus fp32 sums' order), and not the
    dtype's own values; after AdamW's
    step every copy is its weight's cast bit for bit, and the next loss through the copies equals the one through
    autocast's casts, and other copies give the loss of weights equal to them (the products read the copies).
    load_state_dict makes the copies again; Muon drops them; nanoGPT's baseline (kernels='torch') and a model with
    any recompute get none. gelu_mlp's MLP (GELU's tanh form) reads its two's copies too."""
    config = tiny_config(arch, gelu_approximate=gelu, bias=gelu != 'tanh')  # with a bias, except gelu_mlp's (none)
    runs = {}
    for copies in (False, True):
        torch.manual_seed(0)
        model = GPT(config, kernels='triton', device_type=device, scatter_embedding_grad=False).to(device)
        optimizer = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device,
                                               matmul_dtype=dtype if copies else None)
        if compiled:  # afresh: past Dynamo's recompile limit GPT.forward would run eager unnoticed
            torch._dynamo.reset()
        stepped = torch.compile(model, backend='aot_eager') if compiled else model
        with torch.autocast(device, dtype=dtype):
            _, loss = stepped(*batch(device))
        loss.backward()  # one micro-step: autocast's gradient is then one rounding from the fp32 sums
        runs[copies] = model, optimizer, stepped, loss.detach(), [p.grad for p in model.parameters()]
    (plain, _, plain_stepped, plain_loss, plain_grads), (model, optimizer, stepped, loss, grads) = runs[False], runs[True]
    kept = [w for w in block_matrices(model) if hasattr(w, 'matmul_copy')]
    expected = [w for block in model.transformer.h for w in block.all_matrices()]
    assert list(map(id, kept)) == list(map(id, expected)) and len(kept) == 4 * config.n_layer
    assert all(block.mlp.one_op == (gelu == 'tanh') for block in model.transformer.h)
    assert not any(hasattr(w, 'matmul_copy') for w in plain.parameters())
    assert {id(p) for p in model.parameters() if hasattr(p, 'matmul_copy')} == set(map(id, kept))  # none for the head
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
    model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device, muon=dict(lr=0.02, momentum=0.95, weight_decay=0.0,
                               embed_lr=1e-2, scalar_lr=1e-2), matmul_dtype=torch.bfloat16)
    assert not any(hasattr(w, 'matmul_copy') for w in model.parameters())
    for kw in [dict(kernels='torch')] + [dict(kernels='triton', recompute=r) for r in RECOMPUTE if r != 'none']:
        other = GPT(config, device_type=device, **kw).to(device)
        other.configure_optimizers(0.1, 1e-2, (0.9, 0.95), device, matmul_dtype=torch.bfloat16)
        assert not any(hasattr(w, 'matmul_copy') for w in other.parameters())
