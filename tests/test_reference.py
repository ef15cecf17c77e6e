"""
The model against references that are not ours, and two behaviours of training:
- GPT-2 against transformers' GPT2LMHeadModel (GELU's tanh form and its exact form), and the
  LLaMA variant against transformers' LlamaForCausalLM (RMSNorm, rotary, SwiGLU, grouped-query
  attention), random weights mapped into our GPT: our loss and every prefix's last logits in fp32
  agree with the reference's, with kernels off (PyTorch's ops) and with every Triton kernel on (on a
  CPU, the Triton interpreter); the Triton attention, which takes bf16 and fp16 only, under bf16
  autocast. The references share no code with ours, so a bug that our kernels and our PyTorch path
  both have, or one in how the model wires them together, shows here;
- which parameters AdamW decays, by a rule of our own here (the module types);
- a single-process run stopped by SIGTERM saves a checkpoint at the step it stopped at, and the
  resumed run prints the uninterrupted run's losses exactly.
"""
import math
import signal
from collections import Counter

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from kernels.choose import resolve
from model import GPTConfig, GPT
from test_reliability import BASE, start, finish, wait_for, losses_text, same_state


def ours(config, setting, device='cpu'):
    """Our model for `config` on `device`: kernels off ('torch') or every Triton kernel on ('triton')."""
    return GPT(config, resolve(setting, config, torch.device(device).type)).to(device)


SETTINGS = ['torch', 'triton']
# tiny shapes: the Triton interpreter runs every program of every launch in Python
VOCAB, N_LAYER, N_HEAD, N_KV_HEAD, N_EMBD, BLOCK, BATCH = 67, 2, 4, 2, 64, 16, 2
ROPE_THETA = 500.0  # not the default 10000: a theta that is not passed on shows
TOL = 1e-5


def gpt2_config(approximate='tanh'):
    return GPTConfig(arch='gpt2', n_layer=N_LAYER, n_head=N_HEAD, n_embd=N_EMBD, block_size=BLOCK, vocab_size=VOCAB,
                     bias=True, dropout=0.0, gelu_approximate=approximate)


def llama_config():
    return GPTConfig(arch='llama', n_layer=N_LAYER, n_head=N_HEAD, n_kv_head=N_KV_HEAD, n_embd=N_EMBD,
                     block_size=BLOCK, vocab_size=VOCAB, dropout=0.0, rope_theta=ROPE_THETA)


@torch.no_grad()
def randomize(reference):
    """Every parameter of a reference random, gains and biases too (their init of ones and zeros would hide a gain
    or bias that is not applied). Matrices at std 0.1 give logits of a few units and attention far from uniform
    (at GPT-2's 0.02 the logits are tenths, and a wrong mask or rotation moves them little)."""
    for name, p in reference.named_parameters():
        if p.dim() >= 2:
            p.normal_(0.0, 0.1)
        elif name.endswith('bias'):
            p.normal_(0.0, 0.2)
        else:  # a norm's gain
            p.copy_(1.0 + 0.2 * torch.randn_like(p))


def gpt2_reference(activation):
    """transformers' GPT-2 at our tiny shapes, no dropout, attention by its eager path (matmuls and softmax)."""
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=BLOCK, n_embd=N_EMBD, n_layer=N_LAYER, n_head=N_HEAD,
                     n_inner=4 * N_EMBD, activation_function=activation, layer_norm_epsilon=1e-5, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=None, eos_token_id=None, attn_implementation='eager')
    reference = GPT2LMHeadModel(cfg).float().eval()
    randomize(reference)
    return reference


def gpt2_weights(reference):
    """Our GPT-2 state dict from transformers' one: the same names, but its Conv1D weights are (in, out) and
    nn.Linear's (out, in); the LM head is the token embedding in both."""
    sd = reference.state_dict()
    conv1d = ('attn.c_attn.weight', 'attn.c_proj.weight', 'mlp.c_fc.weight', 'mlp.c_proj.weight')
    out = {k: (v.t() if k.endswith(conv1d) else v) for k, v in sd.items()
           if k.startswith('transformer.') and not k.endswith(('.attn.bias', '.attn.masked_bias'))}  # mask buffers
    out['lm_head.weight'] = sd['transformer.wte.weight']
    return out


def llama_reference(intermediate_size):
    """transformers' LLaMA at our tiny shapes: grouped-query attention, tied embeddings, no biases, eager attention."""
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=N_EMBD, intermediate_size=intermediate_size,
                      num_hidden_layers=N_LAYER, num_attention_heads=N_HEAD, num_key_value_heads=N_KV_HEAD,
                      max_position_embeddings=BLOCK, rms_norm_eps=1e-6, rope_theta=ROPE_THETA,
                      tie_word_embeddings=True, attention_bias=False, mlp_bias=False, attention_dropout=0.0,
                      bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation='eager')
    reference = LlamaForCausalLM(cfg).float().eval()
    randomize(reference)
    return reference


def llama_weights(reference):
    """Our LLaMA state dict from transformers' one. c_attn packs the q heads, then the k heads, then the v heads:
    q_proj, k_proj and v_proj stacked (each one's rows are its heads in order); c_fc packs gate, then up. Both
    rotate by halves (dimension i pairs with i + head_dim/2: kernels/rotary.py, transformers' rotate_half), so
    the q and k rows keep their order."""
    sd, out = reference.state_dict(), {}
    out['transformer.wte.weight'] = out['lm_head.weight'] = sd['model.embed_tokens.weight']
    out['transformer.ln_f.weight'] = sd['model.norm.weight']
    for i in range(N_LAYER):
        hf, us = f'model.layers.{i}.', f'transformer.h.{i}.'
        out[us + 'ln_1.weight'] = sd[hf + 'input_layernorm.weight']
        out[us + 'ln_2.weight'] = sd[hf + 'post_attention_layernorm.weight']
        out[us + 'attn.c_attn.weight'] = torch.cat([sd[hf + f'self_attn.{p}_proj.weight'] for p in 'qkv'])
        out[us + 'attn.c_proj.weight'] = sd[hf + 'self_attn.o_proj.weight']
        out[us + 'mlp.c_fc.weight'] = torch.cat([sd[hf + 'mlp.gate_proj.weight'], sd[hf + 'mlp.up_proj.weight']])
        out[us + 'mlp.c_proj.weight'] = sd[hf + 'mlp.down_proj.weight']
    return out


def mlp_hidden(model):
    """Our LLaMA MLP's hidden width, off c_fc's weight (gate and up packed: twice the width in rows)."""
    return model.state_dict()['transformer.h.0.mlp.c_fc.weight'].shape[0] // 2


def load_into(model, weights):
    """The reference's weights into our model: every key of our state dict given, none left over, and the tied
    matrix still one tensor afterwards (one parameter, both the LM head and the token embedding)."""
    assert set(weights) == set(model.state_dict()), sorted(set(weights) ^ set(model.state_dict()))
    model.load_state_dict(weights, strict=True)
    sd = model.state_dict()
    assert sd['lm_head.weight'].data_ptr() == sd['transformer.wte.weight'].data_ptr(), "LM head not tied to wte"
    names = [n for n, _ in model.named_parameters()]
    assert ('lm_head.weight' in names) + ('transformer.wte.weight' in names) == 1, names


def inputs():
    """(tokens, next tokens), on the CPU: the reference runs there."""
    return torch.randint(VOCAB, (BATCH, BLOCK)), torch.randint(VOCAB, (BATCH, BLOCK))


def compare(model, reference):
    """Our fp32 loss and each prefix's last logits against the reference run in float64 (so that the error is
    ours alone, not the reference's fp32 rounding too). The loss is on next tokens given as targets (the
    reference's by F.cross_entropy on its logits), within TOL. The logits within TOL of the largest reference
    logit: fp32 rounding grows with the logits' scale, and at the few units these weights give that is about
    3e-5, some 100 units in the last place of the largest logit (the error seen is 1e-6 or less)."""
    idx, targets = inputs()
    with torch.no_grad():
        ref_logits = reference.double()(idx).logits  # (B, T, V)
        ref_loss = F.cross_entropy(ref_logits.flatten(0, 1), targets.flatten()).item()
    device = next(model.parameters()).device
    idx, targets = idx.to(device), targets.to(device)
    model.train()  # the loss as training makes it (dropout is 0)
    _, loss = model(idx, targets)
    assert loss.dtype == torch.float32
    assert abs(loss.item() - ref_loss) <= TOL, f"loss {loss.item():.8f} != reference's {ref_loss:.8f}"
    model.eval()
    bound = TOL * ref_logits.abs().max().item()
    with torch.no_grad():
        for t in range(1, BLOCK + 1):
            logits, none = model(idx[:, :t])
            assert none is None and logits.shape == (BATCH, 1, VOCAB) and logits.dtype == torch.float32
            err = (logits[:, 0].double().cpu() - ref_logits[:, t - 1]).abs().max().item()
            assert err <= bound, f"prefix of {t}: logits differ by {err:.3e} > {bound:.3e} ({TOL:g} x max |logit|)"


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("activation, approximate", [('gelu_new', 'tanh'), ('gelu', 'none')], ids=['gelu_new', 'gelu'])
def test_gpt2_matches_transformers(setting, activation, approximate, device):
    reference = gpt2_reference(activation)
    model = ours(gpt2_config(approximate), setting, device)
    load_into(model, gpt2_weights(reference))
    compare(model, reference)


@pytest.mark.parametrize("setting", SETTINGS)
def test_llama_matches_transformers(setting, device):
    model = ours(llama_config(), setting, device)
    reference = llama_reference(mlp_hidden(model))
    load_into(model, llama_weights(reference))
    compare(model, reference)


@pytest.mark.parametrize("arch", ['gpt2', 'llama'])
def test_triton_attention_in_bf16_matches_transformers(arch, device):
    """In fp32 the model's attention is SDPA whatever `kernels` says (the Triton attention takes bf16 and fp16),
    so the tests above do not reach it: here, under bf16 autocast, our model with every Triton kernel on against
    the reference in float64. Multi-head for GPT-2, grouped-query for LLaMA. The logits' RMS error (over all
    B x V last logits: steadier than the largest error, which for one draw of rounding errors can land far from
    PyTorch's either way) within twice our PyTorch path's under the same autocast; the loss within half a bf16
    unit in the last place at its own scale, as if rounded to bf16 once."""
    models = {s: ours(gpt2_config() if arch == 'gpt2' else llama_config(), s, device) for s in SETTINGS}
    reference = gpt2_reference('gelu_new') if arch == 'gpt2' else llama_reference(mlp_hidden(models['torch']))
    weights = gpt2_weights(reference) if arch == 'gpt2' else llama_weights(reference)
    idx, targets = inputs()
    out = {}
    for setting, model in models.items():
        load_into(model, weights)
        with torch.autocast(torch.device(device).type, dtype=torch.bfloat16):
            model.train()
            _, loss = model(idx.to(device), targets.to(device))
            model.eval()
            with torch.no_grad():
                logits, _ = model(idx.to(device))
        out[setting] = loss.item(), logits[:, 0].double().cpu()
    with torch.no_grad():
        ref_logits = reference.double()(idx).logits
        ref_loss = F.cross_entropy(ref_logits.flatten(0, 1), targets.flatten()).item()
    rms = {s: (logits - ref_logits[:, -1]).pow(2).mean().sqrt().item() for s, (_, logits) in out.items()}
    assert rms['triton'] <= 2 * rms['torch'], (
        f"logits: RMS error {rms['triton']:.3e} > 2 x PyTorch's {rms['torch']:.3e}")
    half_ulp = 2.0 ** (math.floor(math.log2(ref_loss)) - 8)  # bf16 has 8 significant bits
    assert abs(out['triton'][0] - ref_loss) <= half_ulp, (
        f"loss {out['triton'][0]:.5f} != reference's {ref_loss:.5f} within half a bf16 unit ({half_ulp:g})")


# -- weight decay ----------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ['gpt2', 'llama'])
def test_weight_decay_on_linear_and_embedding_matrices_only(arch):
    model = ours(gpt2_config() if arch == 'gpt2' else llama_config(), 'torch')
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.95), device_type='cpu')
    assert isinstance(optimizer, torch.optim.AdamW)
    # by module type, not by the parameter's shape: a Linear's or an Embedding's weight decays, nothing else does
    matrices = {id(m.weight) for _, m in model.named_modules() if isinstance(m, (nn.Linear, nn.Embedding))}
    name = {id(p): n for n, p in model.named_parameters()}
    seen = Counter()
    for group in optimizer.param_groups:
        assert group['lr'] == 1e-3 and tuple(group['betas']) == (0.9, 0.95)
        for p in group['params']:
            seen[id(p)] += 1
            want = 0.1 if id(p) in matrices else 0.0
            assert group['weight_decay'] == want, f"{name[id(p)]}: weight decay {group['weight_decay']}, not {want}"
    trainable = {id(p) for p in model.parameters() if p.requires_grad}
    assert set(seen) == trainable, f"not in the optimizer: {sorted(name[i] for i in trainable - set(seen))}"
    assert all(c == 1 for c in seen.values()), f"more than once: {sorted(name[i] for i, c in seen.items() if c > 1)}"
    # what is left is the norms' gains (ln_1, ln_2, ln_f) and, in GPT-2, the biases
    rest = [n for n, p in model.named_parameters() if id(p) not in matrices]
    gains = [n for n in rest if n.rsplit('.', 2)[-2] in ('ln_1', 'ln_2', 'ln_f') and n.endswith('.weight')]
    biases = [n for n in rest if n.endswith('.bias')]
    assert sorted(gains + biases) == sorted(rest) and len(gains) == 2 * N_LAYER + 1, rest
    assert len(biases) == (6 * N_LAYER + 1 if arch == 'gpt2' else 0), biases


# -- a stop by SIGTERM and its resume ----------------------------------------------------------------

def test_sigterm_checkpoint_resumes_to_the_uninterrupted_losses(data_root, tmp_path):
    """One process (tests/test_reliability.py stops at a signal without resuming, and resumes after a signal under
    DDP), with dropout (BASE): no eval checkpoint before the signal, so the resume starts from the one it wrote."""
    args = [*BASE, f'--dataset={data_root}/shakespeare_char', '--eval_interval=1000']
    train = 'train.py'
    whole = start(train, tmp_path / 'whole', *args, '--max_iters=20')
    stopped = start(train, tmp_path / 'stopped', *args, '--max_iters=100000')  # no end but the signal, however late
    wait_for(tmp_path / 'stopped', 'iter 3:', stopped)
    stopped.send_signal(signal.SIGTERM)
    rc, log = finish(stopped, tmp_path / 'stopped', timeout=60)
    assert rc == 0 and "stopped by SIGTERM at iter" in log, log
    at = torch.load(tmp_path / 'stopped' / 'ckpt.pt', weights_only=True)['iter_num']
    assert f"stopped by SIGTERM at iter {at}, checkpoint saved" in log, log
    assert log.count('saved checkpoint') == 1 and f"ckpt.pt (iter {at})" in log and 3 < at < 20, log
    last = int(losses_text(log, 0)[-1].split()[1].rstrip(':'))
    assert last == at - 1, f"the checkpoint says iter {at}, but the last step that ran is iter {last}"
    rc, log = finish(start(train, tmp_path / 'stopped', *args, '--max_iters=20', '--init_from=resume'),
                     tmp_path / 'stopped')
    assert rc == 0 and f"resumed at iter {at}" in log, log
    rc, whole_log = finish(whole, tmp_path / 'whole')
    assert rc == 0, whole_log
    resumed, uninterrupted = losses_text(log, at), losses_text(whole_log, at)
    assert len(resumed) == len(uninterrupted) == 21 - at, log
    assert resumed == uninterrupted, next(f"resumed {a!r} != uninterrupted {b!r}"
                                          for a, b in zip(resumed, uninterrupted) if a != b)
    same_state(tmp_path / 'whole' / 'ckpt.pt', tmp_path / 'stopped' / 'ckpt.pt')
