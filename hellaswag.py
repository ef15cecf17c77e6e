"""
HellaSwag, scored as build-nanogpt and llm.c score it: each context followed by each of its four endings; an
ending's score is its tokens' loss given what precedes them, summed (acc) or averaged over its tokens (acc_norm);
the ending of lowest score is the model's answer. Many examples a forward, their rows padded. eval.py scores a
checkpoint with it, train.py the model being trained at every eval (its `hellaswag` key).
"""
import os
import json
import urllib.request

import torch
import torch.nn.functional as F

from data.common import subword_tokenizer

URL = "https://raw.githubusercontent.com/rowanz/hellaswag/master/data/hellaswag_val.jsonl"
VALIDATION = os.path.join('data', 'hellaswag', 'hellaswag_val.jsonl')  # where the download goes


def read(path):
    """The examples [(context, endings, label)] of a jsonl in HellaSwag's format; '' for the validation set,
    downloaded into VALIDATION when it is not there. ValueError when neither can be read, holds no example, or for an
    example without four endings and the label of one."""
    if not path:
        path = VALIDATION
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            part = f"{path}.{os.getpid()}.tmp"  # each rank's own: whole or not at all, a cut download is not the set
            try:
                urllib.request.urlretrieve(URL, part)
                os.replace(part, path)
            except OSError as e:
                raise ValueError(f"could not download {URL} ({e}); pass a local file with --hellaswag=PATH")
    try:
        with open(path, encoding='utf-8') as f:
            examples = [(x['ctx'], x['endings'], x['label']) for x in map(json.loads, filter(str.strip, f))]
    except (OSError, ValueError, KeyError) as e:
        raise ValueError(f"cannot read HellaSwag examples from {path}: {type(e).__name__}: {e}")
    if not examples:
        raise ValueError(f"{path} holds no HellaSwag examples")
    for i, (_, endings, label) in enumerate(examples):
        if len(endings) != 4 or label not in range(4):
            raise ValueError(f"{path}, example {i + 1}: {len(endings)} endings and label {label!r}; HellaSwag's "
                             f"have four and the label of one (0 to 3)")
    return examples


def encoder(tokenizer, vocab_size):
    """The encode function HellaSwag's text goes through: the model's subword tokenizer (data.common: its Hugging
    Face tokenizer, or GPT-2 BPE); ValueError for a character-level model."""
    subword = subword_tokenizer(tokenizer, vocab_size)
    if subword is None:
        raise ValueError(f"HellaSwag needs a model of GPT-2 BPE or of a folder's tokenizer.json, not one of "
                         f"{vocab_size} tokens")
    return subword[0]


def ending_losses(model, examples, encode, device):
    """(summed, mean) ending losses (len(examples), 4) of examples [(context, endings, _)], one forward for all.
    A row is the last block_size tokens of context and ending, as the model samples: a long context loses its start."""
    rows = []  # (a row's tokens, how many of them are the ending's)
    for ctx, endings, _ in examples:
        c = encode(ctx)
        for e in (encode(' ' + ending) for ending in endings):
            rows.append(((c + e)[-model.config.block_size:], len(e)))
    T = max(len(r) for r, _ in rows)
    tokens = torch.zeros(len(rows), T, dtype=torch.long)
    in_ending = torch.zeros(len(rows), T, dtype=torch.bool)  # the positions whose token is an ending's
    for i, (r, n) in enumerate(rows):
        tokens[i, :len(r)] = torch.tensor(r)
        in_ending[i, max(0, len(r) - n):len(r)] = True
    tokens, in_ending = tokens.to(device), in_ending.to(device)
    logits, _ = model(tokens, all_logits=True)  # (rows, T, V): position t predicts token t + 1
    losses = F.cross_entropy(logits[:, :-1].float().flatten(0, 1), tokens[:, 1:].flatten(), reduction='none')
    losses = losses.view(len(rows), T - 1) * in_ending[:, 1:]
    summed = losses.sum(1)
    return summed.view(-1, 4), (summed / in_ending[:, 1:].sum(1)).view(-1, 4)


@torch.no_grad()
def right_answers(model, examples, encode, device, ctx, examples_per_forward=16):
    """How many examples the model answers right, by summed and by mean ending loss: (acc's count, acc_norm's)."""
    right = torch.zeros(2, dtype=torch.long, device=device)  # counted on the device: one wait, at the end
    for start in range(0, len(examples), examples_per_forward):
        batch = examples[start:start + examples_per_forward]
        with ctx:
            summed, mean = ending_losses(model, batch, encode, device)
        labels = torch.tensor([label for _, _, label in batch], device=device)
        right += torch.stack([(summed.argmin(1) == labels).sum(), (mean.argmin(1) == labels).sum()])
    return right.tolist()


def summary(right, n):
    """The line both scripts print."""
    return (f"hellaswag: {n} examples, acc {right[0] / n:.4f} ({right[0]}/{n}), "
            f"acc_norm {right[1] / n:.4f} ({right[1]}/{n})")
