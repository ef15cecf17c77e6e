"""
Tiny Shakespeare with the GPT-2 BPE tokenizer, for finetuning GPT-2 checkpoints, or with a Hugging Face folder's
tokenizer.json (--tokenizer=FOLDER) for finetuning that folder's model.
Writes train.bin/val.bin (uint16 ids), and with --tokenizer the folder's tokenizer files beside them: a model trained
from scratch on them keeps that tokenizer, and train.py refuses a model that reads another.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from data.common import gpt2_encoding, read_tokenizer, subword_tokenizer, text_and_args, write_splits

text, args = text_and_args(__file__, "Tokenise Tiny Shakespeare (or any text file) with GPT-2 BPE "
                                   "or a Hugging Face folder's tokenizer.", tokenizer=True)
if args.tokenizer is None:
    encode = gpt2_encoding().encode_ordinary
else:
    try:
        tokenizer = read_tokenizer(args.tokenizer)
    except ValueError as e:
        sys.exit(f"error: {e}")
    if tokenizer is None:
        sys.exit(f"error: {args.tokenizer} holds no tokenizer.json")
    encode = subword_tokenizer(tokenizer, None)[0]

# split the text, not the tokens, so the split point is the same as in shakespeare_char
n = int(0.9 * len(text))
write_splits(args.out_dir, encode(text[:n]), encode(text[n:]),
             tokenizer["files"] if args.tokenizer else {})  # the tokenizer beside them: train.py checks the model's
