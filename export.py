"""
Export a trained model (out_dir's last checkpoint: ckpt.pt or FSDP's sharded one) as a Hugging Face folder that
transformers' AutoModelForCausalLM reads: config.json and model.safetensors (hf.py).
$ python export.py --out_dir=out-shakespeare --hf_dir=gpt2-shakespeare
$ python export.py --out_dir=out-xl --hf_dir= --whole_ckpt=out-xl/ckpt.pt   # FSDP's sharded checkpoint as one file
A model of GPT-2's BPE gets GPT-2's tokenizer files; a character-level model gets its dataset's meta.json, whose
vocabulary is its tokenizer (transformers has no class that reads it).
"""
import os
import sys
import shutil

import torch

import checkpoint
import hf
from model import GPTConfig, GPT
from configurator import configure, user_errors
from data.common import read_meta, dataset_dir, GPT2_VOCAB_SIZE

# -----------------------------------------------------------------------------
out_dir = 'out'  # the checkpoint is out_dir's last (ckpt.pt or ckpt_sharded/)
hf_dir = 'hf'  # the folder written ('' for none)
whole_ckpt = ''  # a path: the checkpoint also written there whole, in ckpt.pt's layout, optimizer state and all
# -----------------------------------------------------------------------------
config = configure(globals())

with user_errors():
    ckpt = checkpoint.load(checkpoint.latest(out_dir), 'cpu')
    model = GPT(GPTConfig(**dict(ckpt['model_args'], dropout=0.0)))
    model.load_state_dict(checkpoint.matched(model.state_dict(), ckpt['model'], out_dir))
    meta = read_meta(dataset_dir(ckpt['config']['dataset'], ckpt['config'].get('data_root', 'data')))
    if hf_dir:
        hf.save(model, hf_dir, gpt2_bpe=meta is None and model.config.vocab_size >= GPT2_VOCAB_SIZE)
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
if meta:
    shutil.copy(meta['path'], hf_dir)
    print(f"a character-level model: its tokenizer is the vocabulary of {os.path.basename(meta['path'])}, copied "
          f"there (token i is the i-th character of its 'chars'); transformers has no tokenizer for it")
print(f"wrote {hf_dir}: transformers.AutoModelForCausalLM.from_pretrained({hf_dir!r}) reads it")
