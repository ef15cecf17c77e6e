"""
Export a trained model (out_dir's last checkpoint: ckpt.pt or FSDP's sharded one) as a Hugging Face folder that
transformers' AutoModelForCausalLM reads: config.json and model.safetensors (hf.py).
$ python export.py --out_dir=out-shakespeare --hf_dir=gpt2-shakespeare
$ python export.py --out_dir=out-xl --hf_dir= --whole_ckpt=out-xl/ckpt.pt   # FSDP's sharded checkpoint as one file
The model's tokenizer goes with it (data.common.model_tokenizer): a character-level model's meta.json, the Hugging
Face tokenizer the run started from, or GPT-2's BPE files.
"""
import os
import sys

import torch

import checkpoint
import hf
from model import GPTConfig, GPT
from configurator import configure, fail, user_errors
from data.common import dataset_dir, model_tokenizer

# -----------------------------------------------------------------------------
out_dir = 'out'  # the checkpoint is out_dir's last (ckpt.pt or ckpt_sharded/)
hf_dir = 'hf'  # the folder written ('' for none)
whole_ckpt = ''  # a path: the checkpoint also written there whole, in ckpt.pt's layout, optimizer state and all
# -----------------------------------------------------------------------------
config = configure(globals())
if whole_ckpt and (os.path.isdir(whole_ckpt) or not os.path.isdir(os.path.dirname(os.path.abspath(whole_ckpt)))):
    fail(f"whole_ckpt={whole_ckpt!r} must be a file's path in a folder that exists")

with user_errors():
    ckpt = checkpoint.load(checkpoint.latest(out_dir), 'cpu')
    model = GPT(GPTConfig(**dict(ckpt['model_args'], dropout=0.0)))
    model.load_state_dict(checkpoint.matched(model.state_dict(), ckpt['model'], out_dir))
    if hf_dir:
        data_dir = dataset_dir(ckpt['config']['dataset'], ckpt['config'].get('data_root', 'data'))
        tokenizer = model_tokenizer(data_dir, ckpt.get('tokenizer'), model.config.vocab_size)
        hf.save(model, hf_dir, tokenizer['files'] if tokenizer else {})
if whole_ckpt:  # the optimizer the run made, its state read into it whole (checkpoint.restore reshards)
    run = ckpt['config']
    optimizer = model.configure_optimizers(run['weight_decay'], run['learning_rate'], (run['beta1'], run['beta2']),
                                           'cpu', muon=dict(lr=run['muon_lr']) if run['optimizer'] == 'muon' else None)
    checkpoint.restore(ckpt, optimizer, torch.amp.GradScaler('cpu', enabled=False), 0, len(ckpt.get('rng') or [0]),
                       model)
    checkpoint.save({k: v for k, v in ckpt.items() if k != 'sharded'}
                    | {'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, whole_ckpt)
    print(f"wrote {whole_ckpt}: the checkpoint whole")
if not hf_dir:
    sys.exit(0)
print(f"the tokenizer: {tokenizer['which'] if tokenizer else f'none ({data_dir} has no meta.json to copy)'}")
print(f"wrote {hf_dir}: transformers.AutoModelForCausalLM.from_pretrained({hf_dir!r}) reads it")
