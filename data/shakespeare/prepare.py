"""
Tiny Shakespeare with the GPT-2 BPE tokenizer, for finetuning GPT-2 checkpoints.
Writes train.bin/val.bin (uint16 ids); no meta.json, readers assume GPT-2 BPE.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from data.common import gpt2_encoding, text_and_out_dir, write_splits

text, out_dir = text_and_out_dir(__file__, "Tokenise Tiny Shakespeare (or any text file) with GPT-2 BPE.")
enc = gpt2_encoding()

# split the text, not the tokens, so the split point is the same as in shakespeare_char
n = int(0.9 * len(text))
write_splits(out_dir, enc.encode_ordinary(text[:n]), enc.encode_ordinary(text[n:]))
