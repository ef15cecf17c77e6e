"""
Weights in and out: Hugging Face checkpoints of GPT-2 (GPT2LMHeadModel) and of LLaMA-style models
(LlamaForCausalLM: RMSNorm, rotary, SwiGLU, grouped-query attention). nanoGPT's own ckpt.pt: checkpoint.py.

load(init_from) -> (model_args, state_dict): 'gpt2', 'gpt2-medium', 'gpt2-large', 'gpt2-xl' from the hub (as
nanoGPT; huggingface_hub, with a network) or a local folder: config.json with model.safetensors, sharded
safetensors with their index, or pytorch_model.bin (read with weights_only=True). Nothing in the files runs as
code. What the model cannot express (another architecture, rope scaling, biases the variant lacks, a missing or
truncated file) is a ValueError of one line; the scripts check every tensor's name and shape as the model takes
them (checkpoint.matched).

save(model, folder, files): config.json and model.safetensors that transformers' AutoModelForCausalLM
reads, and the tokenizer's files (export.py: GPT-2's, the Hugging Face tokenizer the run started from, or a
character vocabulary); a ValueError where transformers has no such model (GPT-2 with grouped-query attention).

The mapping: GPT-2's names are ours, but its Conv1D weights are (in, out), nn.Linear's (out, in). LLaMA's c_attn
packs q_proj, k_proj and v_proj (rows: the q heads, then the k heads, then the v heads), c_fc packs gate_proj and
up_proj; both rotate by halves (kernels/rotary.py, transformers' rotate_half), so no row moves.
"""
import json
import os

import torch

from configurator import first_line
from data.common import write_files

GPT2_SIZES = ('gpt2', 'gpt2-medium', 'gpt2-large', 'gpt2-xl')
CONV1D = ('attn.c_attn.weight', 'attn.c_proj.weight', 'mlp.c_fc.weight', 'mlp.c_proj.weight')
LLAMA_LAYER = {  # ours -> transformers', in one block (c_attn and c_fc are packs of these)
    'ln_1.weight': 'input_layernorm.weight', 'ln_2.weight': 'post_attention_layernorm.weight',
    'attn.c_proj.weight': 'self_attn.o_proj.weight', 'mlp.c_proj.weight': 'mlp.down_proj.weight'}
QKV = ('self_attn.q_proj.weight', 'self_attn.k_proj.weight', 'self_attn.v_proj.weight')
GATE_UP = ('mlp.gate_proj.weight', 'mlp.up_proj.weight')


def model_args(config, path):
    """GPTConfig's arguments for a transformers config.json (a dict); ValueError naming what is unsupported."""
    def unsupported(what):
        return ValueError(f"{path}: {what} is not supported")
    kind = config.get('model_type')
    if kind == 'gpt2':
        forms = {'gelu_new': 'tanh', 'gelu_pytorch_tanh': 'tanh', 'gelu': 'none'}
        if config.get('activation_function', 'gelu_new') not in forms:
            raise unsupported(f"activation_function={config['activation_function']!r}")
        if config.get('scale_attn_by_inverse_layer_idx') or config.get('scale_attn_weights') is False:
            raise unsupported("attention scaled other than by 1/sqrt(head_dim)")
        return dict(arch='gpt2', n_layer=config['n_layer'], n_head=config['n_head'], n_embd=config['n_embd'],
                    block_size=config['n_positions'], vocab_size=config['vocab_size'], bias=True,
                    gelu_approximate=forms[config.get('activation_function', 'gelu_new')],
                    mlp_hidden=config.get('n_inner'), norm_eps=config.get('layer_norm_epsilon', 1e-5),
                    tie_embeddings=config.get('tie_word_embeddings', True))
    if kind == 'llama':
        rope = config.get('rope_parameters') or {}  # transformers 5 keeps rope_theta and its scaling here
        scaling = config.get('rope_scaling') or rope  # transformers 4's, 'type' in older configs
        if scaling.get('rope_type', scaling.get('type', 'default')) != 'default':
            raise unsupported(f"rope scaling ({scaling})")
        if config.get('attention_bias') or config.get('mlp_bias'):
            raise unsupported("biases in the attention or the MLP")
        if config.get('hidden_act', 'silu') != 'silu':
            raise unsupported(f"hidden_act={config['hidden_act']!r}")
        n_head = config['num_attention_heads']
        return dict(arch='llama', n_layer=config['num_hidden_layers'], n_head=n_head,
                    n_kv_head=config.get('num_key_value_heads') or n_head, n_embd=config['hidden_size'],
                    block_size=config['max_position_embeddings'], vocab_size=config['vocab_size'],
                    rope_theta=float(rope.get('rope_theta') or config.get('rope_theta') or 10000.0),
                    mlp_hidden=config['intermediate_size'], head_dim=config.get('head_dim'),
                    norm_eps=config.get('rms_norm_eps', 1e-6), tie_embeddings=config.get('tie_word_embeddings', False))
    raise ValueError(f"{path}: model_type={kind!r} is not supported (GPT2LMHeadModel and LlamaForCausalLM-style "
                     f"models are)")


def read_config(folder):
    """config.json of a Hugging Face checkpoint folder, as a dict."""
    try:
        with open(os.path.join(folder, 'config.json')) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        run = any(os.path.exists(os.path.join(folder, name)) for name in ('ckpt.pt', 'ckpt_sharded'))
        raise ValueError(f"{folder}: no readable config.json ({first_line(e)})" + (
            f"; it is a run's folder: --init_from=resume --out_dir={folder}" if run else "")) from None


def read_weights(folder):
    """{name: tensor} of a Hugging Face checkpoint folder: model.safetensors, else its shards, else
    pytorch_model.bin (the order transformers reads them in)."""
    index = os.path.join(folder, 'model.safetensors.index.json')
    single = os.path.join(folder, 'model.safetensors')
    try:
        if os.path.exists(index) or os.path.exists(single):
            from safetensors.torch import load_file
            files = [single]
            if not os.path.exists(single):
                with open(index) as f:
                    files = [os.path.join(folder, name) for name in sorted(set(json.load(f)['weight_map'].values()))]
            return {name: t for file in files for name, t in load_file(file).items()}
        if os.path.exists(os.path.join(folder, 'pytorch_model.bin')):
            return torch.load(os.path.join(folder, 'pytorch_model.bin'), map_location='cpu', weights_only=True)
        raise ValueError("no model.safetensors, model.safetensors.index.json or pytorch_model.bin")
    except Exception as e:  # a truncated or damaged file, in whatever words its reader says it
        raise ValueError(f"{folder}: cannot read the weights ({first_line(e)})") from None


def ours_from_hf(tensors, args, source):
    """Our state dict from the tensors of checkpoint `source` (with or without the 'transformer.' / 'model.'
    prefixes). A tied model's file may hold the embedding twice; where it holds another head, the model loads untied
    (args['tie_embeddings'] set False, one printed line), as transformers loads it."""
    head = tensors.get('lm_head.weight')
    if args['arch'] == 'gpt2':
        sd = {k.removeprefix('transformer.'): v for k, v in tensors.items()
              if not k.endswith(('.attn.bias', '.attn.masked_bias', 'lm_head.weight'))}  # and the causal masks
        out = {'transformer.' + k: (v.t() if k.endswith(CONV1D) else v) for k, v in sd.items()}
    else:
        sd = {k.removeprefix('model.'): v for k, v in tensors.items() if k != 'lm_head.weight'}
        out = {'transformer.wte.weight': sd.pop('embed_tokens.weight'),
               'transformer.ln_f.weight': sd.pop('norm.weight')}
        for i in range(args['n_layer']):
            hf = f'layers.{i}.'
            out |= {f'transformer.h.{i}.{k}': sd.pop(hf + v) for k, v in LLAMA_LAYER.items()}
            out[f'transformer.h.{i}.attn.c_attn.weight'] = torch.cat([sd.pop(hf + k) for k in QKV])
            out[f'transformer.h.{i}.mlp.c_fc.weight'] = torch.cat([sd.pop(hf + k) for k in GATE_UP])
        unused = [k for k in sd if not k.endswith('rotary_emb.inv_freq')]  # older checkpoints saved the tables
        if unused:
            raise KeyError(unused[0])
    wte = out['transformer.wte.weight']
    if args['tie_embeddings'] and head is not None and head.data_ptr() != wte.data_ptr():  # (not one tensor twice)
        args['tie_embeddings'] = head.shape == wte.shape and torch.equal(head, wte)
        if not args['tie_embeddings']:
            print(f"{source}: config.json ties the LM head to the embedding, but the weights hold another head: "
                  f"loaded untied, as transformers loads it")
    if head is None and not args['tie_embeddings']:
        raise KeyError('lm_head.weight')
    out['lm_head.weight'] = wte if args['tie_embeddings'] else head
    return out


def load(init_from, block_size=None):
    """(GPTConfig's arguments, our state dict) of a pretrained model: a GPT-2 size or a local folder; block_size:
    a context shorter than the model's (GPT-2's position embedding cropped), None for the model's own."""
    folder = init_from
    if init_from in GPT2_SIZES and not os.path.isdir(init_from):
        try:
            from huggingface_hub import snapshot_download
            folder = snapshot_download(f'openai-community/{init_from}',
                                       allow_patterns=['config.json', 'model.safetensors'])
        except Exception as e:
            raise ValueError(f"cannot download {init_from} from the Hugging Face hub ({first_line(e)}):"
                             f" pass the path of a local copy instead") from None
    elif not os.path.isdir(init_from):
        raise ValueError(f"init_from={init_from!r} is neither one of {GPT2_SIZES} nor a folder (a Hugging Face "
                         f"checkpoint)")
    try:
        args = model_args(read_config(folder), folder)
    except KeyError as e:
        raise ValueError(f"{folder}: config.json has no {e.args[0]!r}") from None
    try:
        sd = ours_from_hf(read_weights(folder), args, folder)
    except KeyError as e:
        raise ValueError(f"{folder}: the weights do not match config.json's model (at {e.args[0]})") from None
    if block_size is not None and block_size > args['block_size']:
        raise ValueError(f"block_size={block_size}, but {init_from} takes at most {args['block_size']} positions: "
                         f"use --block_size={args['block_size']} or less")
    if block_size is not None and args['arch'] == 'gpt2':
        sd['transformer.wpe.weight'] = sd['transformer.wpe.weight'][:block_size]
    return args | dict(block_size=block_size or args['block_size']), sd


def hf_from_ours(model):
    """(config.json, {name: tensor}) of transformers' model for ours (fp32 weights, contiguous, the head once)."""
    cfg, sd = model.config, {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
    tie = cfg.tie_embeddings
    if cfg.arch == 'gpt2' and cfg.n_kv_head != cfg.n_head:
        raise ValueError(f"n_kv_head={cfg.n_kv_head}: GPT2LMHeadModel has no grouped-query attention "
                         f"(arch='llama' has)")
    if cfg.arch == 'gpt2':
        config = dict(architectures=['GPT2LMHeadModel'], model_type='gpt2', n_layer=cfg.n_layer, n_head=cfg.n_head,
                      n_embd=cfg.n_embd, n_positions=cfg.block_size, n_ctx=cfg.block_size, vocab_size=cfg.vocab_size,
                      n_inner=cfg.mlp_hidden, layer_norm_epsilon=cfg.norm_eps, tie_word_embeddings=tie,
                      activation_function={'tanh': 'gelu_new', 'none': 'gelu'}[cfg.gelu_approximate],
                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        tensors = {k: (v.t() if k.endswith(CONV1D) else v) for k, v in sd.items() if k.startswith('transformer.')}
        if not cfg.bias:  # GPT2LMHeadModel has biases: zeros compute what none do
            tensors |= {k[:-len('weight')] + 'bias': torch.zeros(v.shape[-1] if k.endswith(CONV1D) else v.shape[0])
                        for k, v in tensors.items() if k.split('.')[-2] not in ('wte', 'wpe')}
        if not tie:
            tensors['lm_head.weight'] = sd['lm_head.weight']
    else:
        config = dict(architectures=['LlamaForCausalLM'], model_type='llama', num_hidden_layers=cfg.n_layer,
                      num_attention_heads=cfg.n_head, num_key_value_heads=cfg.n_kv_head,
                      hidden_size=cfg.n_embd, intermediate_size=cfg.mlp_hidden, head_dim=cfg.head_dim,
                      max_position_embeddings=cfg.block_size, vocab_size=cfg.vocab_size, rms_norm_eps=cfg.norm_eps,
                      rope_theta=cfg.rope_theta, tie_word_embeddings=tie, hidden_act='silu', attention_bias=False,
                      mlp_bias=False)
        nq, nkv = cfg.n_head * cfg.head_dim, cfg.n_kv_head * cfg.head_dim
        tensors = {'model.embed_tokens.weight': sd['transformer.wte.weight'],
                   'model.norm.weight': sd['transformer.ln_f.weight']}
        for i in range(cfg.n_layer):
            ours, hf = f'transformer.h.{i}.', f'model.layers.{i}.'
            tensors |= {hf + v: sd[ours + k] for k, v in LLAMA_LAYER.items()}
            tensors |= dict(zip((hf + k for k in QKV), sd[ours + 'attn.c_attn.weight'].split([nq, nkv, nkv])))
            tensors |= dict(zip((hf + k for k in GATE_UP), sd[ours + 'mlp.c_fc.weight'].chunk(2)))
        if not tie:
            tensors['lm_head.weight'] = sd['lm_head.weight']
    return config, {k: v.contiguous() for k, v in tensors.items()}


def save(model, folder, files):
    """A Hugging Face folder of the model: config.json, model.safetensors and its tokenizer's files {name: text}
    (bos and eos ids from their generation_config.json, None without one). ValueError where folder is a file, or
    holds files of the kinds transformers reads (weights, configs, vocabularies) that this does not write: it could
    read them in place of these."""
    from safetensors.torch import save_file
    config, tensors = hf_from_ours(model)
    written = {'config.json', 'model.safetensors', *files}
    if os.path.isfile(folder):
        raise ValueError(f"{folder} is a file: give the path of a folder to write")
    others = sorted(name for name in (os.listdir(folder) if os.path.isdir(folder) else [])
                    if name not in written and name.endswith(('.safetensors', '.bin', '.json', '.txt', '.model')))
    if others:
        raise ValueError(f"{folder} holds {', '.join(others)}, another model's files transformers could read with "
                         f"these: give a new or empty folder")
    ids = json.loads(files.get('generation_config.json', '{}'))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(config | {'torch_dtype': 'float32', 'bos_token_id': ids.get('bos_token_id'),
                            'eos_token_id': ids.get('eos_token_id')}, f, indent=2)
    save_file(tensors, os.path.join(folder, 'model.safetensors'), metadata={'format': 'pt'})
    write_files(folder, files)
