"""
Tiny Shakespeare with the GPT-2 BPE tokenizer, for finetuning GPT-2 checkpoints, or with a Hugging Face folder's
tokenizer.json (--tokenizer=FOLDER) for finetuning that folder's model.
Writes train.bin/val.bin (uint16 ids), and with --tokenizer the folder's tokenizer files beside them: a model trained
from scratch on them keeps that tokenizer, and train.py refuses a model that reads another.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from data.common import preparing_tokenizer, text_and_args, write_splits

text, args = text_and_args(__file__, "Tokenise Tiny Shakespeare (or any text file) with GPT-2 BPE "
                                   "or a Hugging Face folder's tokenizer.", tokenizer=True)
encode, _, vocabulary = preparing_tokenizer(args.tokenizer)

# split the text, not the tokens, so the split point is the same as in shakespeare_char
n = int(0.9 * len(text))
write_splits(args.out_dir, encode(text[:n]), encode(text[n:]), vocabulary)  # the tokenizer beside: train.py checks it
