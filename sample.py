"""
Sample from a trained model, or from pretrained weights (hf.py).
$ python sample.py --out_dir=out-shakespeare-char --start="ROMEO:" --num_samples=3
$ python sample.py --init_from=gpt2-xl --start="What is the answer to life, the universe, and everything?"
--start is the prompt, or FILE:path to read it from a file.
"""
import os

import torch

import checkpoint
from kernels import choose
from model import GPTConfig, GPT, compile_model
from configurator import configure, device_and_autocast, fail, user_errors
from data.common import dataset_dir, model_tokenizer

# -----------------------------------------------------------------------------
init_from = 'resume'  # 'resume' (out_dir's checkpoint), 'gpt2'..'gpt2-xl' or a Hugging Face folder
out_dir = 'out'  # the checkpoint is out_dir's last (ckpt.pt or ckpt_sharded/)
start = "\n"  # prompt, or "FILE:prompt.txt"
num_samples = 5
max_new_tokens = 500
temperature = 0.8  # 1.0 samples the model's distribution, lower is more conservative, 0 is greedy
top_k = 200  # keep only the top_k most likely tokens (None for all)
seed = 1337
device = 'auto'  # 'auto', 'cpu', 'cuda', 'cuda:1', ...
dtype = 'auto'  # 'auto', 'float32', 'bfloat16', 'float16'
kernels = 'auto'  # 'auto' (on CUDA: measured, forward only, at the full context), 'triton' or 'torch',
# and per-op overrides (True, False or None), as in train.py
use_triton_layer_norm = None
use_triton_rms_norm = None
use_triton_rotary = None
use_triton_mlp = None
use_triton_attention = None
use_triton_cross_entropy = None
compile = False
# -----------------------------------------------------------------------------
config = configure(globals(), optional=('top_k',))
if not (top_k is None or isinstance(top_k, int) and top_k >= 1) or not (isinstance(temperature, (int, float))
                                                                         and temperature >= 0):
    fail(f"top_k={top_k!r}, temperature={temperature!r}: top_k at least 1 (or None), temperature at least 0")
if start.startswith('FILE:'):
    if not os.path.isfile(start[5:]):
        fail(f"start={start!r}: no such file")
    with open(start[5:], 'r', encoding='utf-8') as f:
        start = f.read()

device, device_type, ptdtype, ctx = device_and_autocast(device, dtype)
torch.manual_seed(seed)

with user_errors():
    model_args, weights, train_config, hf_tokenizer = checkpoint.weights(init_from, out_dir, device)
    gptconf = GPTConfig(**dict(model_args, dropout=0.0))  # sampling never drops out
    overrides = choose.checked_overrides({n: config[f'use_triton_{n}'] for n in choose.OVERRIDES}, gptconf.arch)
measured = None
if kernels == 'auto' and device_type == 'cuda':  # one sequence at a time, forward only
    measured, _ = choose.measure(gptconf, 1, ptdtype, device, compile, overrides=overrides, backward=False)
with user_errors():
    model = GPT(gptconf, choose.resolve(kernels, gptconf, device_type, overrides, measured))
    source = out_dir if init_from == 'resume' else init_from
    model.load_state_dict(checkpoint.matched(model.state_dict(), weights, source))
weights = None
model.eval().to(device)
if compile:
    model = compile_model(model)

# the tokenizer (data.common.model_tokenizer): the dataset's characters (or a folder's meta.json, as export.py copies
# it), else the Hugging Face tokenizer of the folder the model came from (kept in the run's checkpoints), else GPT-2 BPE
data_dir = (dataset_dir(train_config['dataset'], train_config.get('data_root', 'data')) if train_config  # (older)
            else init_from if os.path.isdir(init_from) else None)
with user_errors():
    tokenizer = model_tokenizer(data_dir, hf_tokenizer, gptconf.vocab_size)
if tokenizer is None:
    fail(f"the model has {gptconf.vocab_size} tokens, too few for GPT-2 BPE, and "
         + (f"{data_dir} has no meta.json: prepare the dataset it was trained on there" if train_config else
            f"{init_from} has neither a tokenizer.json nor a meta.json"))
print(f"the tokenizer: {tokenizer['which']}")
with user_errors():
    start_ids = tokenizer['encode'](start)
if not start_ids:
    fail("the prompt is empty; give --start some text")
x = torch.tensor(start_ids, dtype=torch.long, device=device)[None, ...]

with torch.no_grad(), ctx:
    for k in range(num_samples):
        y = model.generate(x, max_new_tokens, temperature=temperature, top_k=top_k)
        print(tokenizer['decode'](y[0].tolist()))
        print('---------------')
