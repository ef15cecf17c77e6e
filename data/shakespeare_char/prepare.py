"""
Tiny Shakespeare at the character level: each distinct character is one token.
Writes train.bin/val.bin (uint16 ids) and meta.json, the vocabulary sample.py and
train.py need to map ids back to characters.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from data.common import meta_json, text_and_args, write_splits

text, args = text_and_args(__file__, "Tokenise Tiny Shakespeare (or any text file) character by character.")
out_dir = args.out_dir
print(f"{len(text):,} characters")

chars = sorted(set(text))
vocab_size = len(chars)
print(f"vocab size {vocab_size}: {''.join(chars)!r}")
stoi = {ch: i for i, ch in enumerate(chars)}

# no shuffling: the val split is the last 10% of the play, text the model never saw
n = int(0.9 * len(text))
write_splits(out_dir, [stoi[c] for c in text[:n]], [stoi[c] for c in text[n:]], {"meta.json": meta_json(chars)})
