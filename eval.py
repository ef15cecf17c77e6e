"""
HellaSwag's validation set, scored as build-nanogpt and llm.c score it: each context followed by each of its four
endings; an ending's score is its tokens' loss given what precedes them, summed (acc) or averaged over its tokens
(acc_norm); the ending of lowest score is the model's answer. Many examples a forward, their rows padded.
$ python eval.py --init_from=gpt2                       # the file downloaded into data/hellaswag/ when there is none
$ python eval.py --out_dir=out --hellaswag=path/to/hellaswag_val.jsonl
"""
import os
import sys
import json
import urllib.request

import torch
import torch.nn.functional as F

import checkpoint
from model import GPTConfig, GPT
from configurator import configure, device_and_autocast
from data.common import subword_tokenizer

# -----------------------------------------------------------------------------
init_from = 'resume'  # 'resume' (out_dir/ckpt.pt), 'gpt2'..'gpt2-xl' or a Hugging Face folder
out_dir = 'out'
hellaswag = ''  # a jsonl of HellaSwag's format (ctx, endings, label a line); '' for the validation set, downloaded
examples_per_forward = 16  # each 4 rows, padded to the longest
device = 'auto'  # 'auto', 'cpu', 'cuda', 'cuda:1', ...
dtype = 'auto'  # 'auto', 'float32', 'bfloat16', 'float16'
# -----------------------------------------------------------------------------
config = configure(globals())
URL = "https://raw.githubusercontent.com/rowanz/hellaswag/master/data/hellaswag_val.jsonl"


def scores(model, examples, encode, device):
    """(summed, mean) ending losses (len(examples), 4) of examples [(context, endings)], one forward for all."""
    rows = [(encode(ctx), encode(' ' + ending)) for ctx, endings in examples for ending in endings]
    T = max(len(c) + len(e) for c, e in rows)
    tokens = torch.zeros(len(rows), T, dtype=torch.long)
    in_ending = torch.zeros(len(rows), T, dtype=torch.bool)  # the positions whose token is an ending's
    for i, (c, e) in enumerate(rows):
        tokens[i, :len(c) + len(e)] = torch.tensor(c + e)
        in_ending[i, len(c):len(c) + len(e)] = True
    tokens, in_ending = tokens.to(device), in_ending.to(device)
    logits, _ = model(tokens, all_logits=True)  # (rows, T, V): position t predicts token t + 1
    losses = F.cross_entropy(logits[:, :-1].float().flatten(0, 1), tokens[:, 1:].flatten(), reduction='none')
    losses = losses.view(len(rows), T - 1) * in_ending[:, 1:]
    summed = losses.sum(1)
    return summed.view(-1, 4), (summed / in_ending[:, 1:].sum(1)).view(-1, 4)


device, _, _, ctx = device_and_autocast(device, dtype)
try:
    model_args, weights, _ = checkpoint.weights(init_from, out_dir, device)
    model = GPT(GPTConfig(**dict(model_args, dropout=0.0)))  # PyTorch's ops: a few hundred forwards in all
    model.load_state_dict(checkpoint.matched(model.state_dict(), weights, out_dir if init_from == 'resume'
                                             else init_from))
except ValueError as e:
    sys.exit(f"error: {e}")
model.eval().to(device)
subword = subword_tokenizer(init_from, model.config.vocab_size)
if subword is None:
    sys.exit(f"error: the model has {model.config.vocab_size} tokens: HellaSwag needs GPT-2 BPE or a folder's "
             f"tokenizer.json")
encode = subword[0]
if not hellaswag:
    hellaswag = os.path.join('data', 'hellaswag', 'hellaswag_val.jsonl')
    if not os.path.exists(hellaswag):
        os.makedirs(os.path.dirname(hellaswag), exist_ok=True)
        try:
            urllib.request.urlretrieve(URL, hellaswag)
        except OSError as e:
            sys.exit(f"error: could not download {URL} ({e}); pass a local file with --hellaswag=PATH")
with open(hellaswag, encoding='utf-8') as f:
    lines = [json.loads(line) for line in f if line.strip()]
right = torch.zeros(2, dtype=torch.long)  # acc, acc_norm
with torch.no_grad(), ctx:
    for start in range(0, len(lines), examples_per_forward):
        batch = lines[start:start + examples_per_forward]
        summed, mean = scores(model, [(x['ctx'], x['endings']) for x in batch], encode, device)
        labels = torch.tensor([x['label'] for x in batch], device=device)
        right += torch.stack([(summed.argmin(1) == labels).sum(), (mean.argmin(1) == labels).sum()]).cpu()
n = len(lines)
print(f"hellaswag: {n} examples, acc {right[0] / n:.4f} ({right[0]}/{n}), acc_norm {right[1] / n:.4f} "
      f"({right[1]}/{n})")
