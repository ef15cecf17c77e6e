"""
OpenWebText (or a local corpus) tokenised with GPT-2 BPE into train.bin/val.bin, or with a
Hugging Face folder's tokenizer.json (--tokenizer=FOLDER, kept beside the tokens, as
data/shakespeare/prepare.py keeps it). Each document is followed by the end-of-text token
(<|endoftext|>, or the folder's eos) so the model learns where documents end. The full
download is ~54GB in the Hugging Face cache and gives ~9B train tokens (~17GB train.bin).
"""
import argparse
import glob
import os
import sys

import numpy as np
from datasets import load_dataset
from tqdm import tqdm

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from data.common import preparing_tokenizer, write_vocabulary

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser(description="Tokenise OpenWebText (or local .txt documents) with GPT-2 BPE or a "
                                             "Hugging Face folder's tokenizer.")
parser.add_argument("--input", help="a local text file, its paragraphs (blank-line separated) the documents, or a "
                                    "folder of .txt files, one document each (default: download openwebtext from "
                                    "the Hugging Face Hub)")
parser.add_argument("--out_dir", default=here, help="where train.bin/val.bin go (default: %(default)s)")
parser.add_argument("--num_proc", type=int, default=max(1, os.cpu_count() // 2), help="worker processes")
parser.add_argument("--test_size", type=float, default=0.0005, help="fraction of documents held out for val")
parser.add_argument("--tokenizer", help="a Hugging Face folder whose tokenizer.json to use (the model init_from will "
                                        "read), instead of GPT-2 BPE")
args = parser.parse_args()

encode, end_of_text, vocabulary = preparing_tokenizer(args.tokenizer)  # before any slow work
if end_of_text is None:
    sys.exit(f"error: {args.tokenizer} names no eos token (generation_config.json's or config.json's eos_token_id, "
             f"tokenizer_config.json's eos_token) to end each document with")
write_vocabulary(args.out_dir, vocabulary)  # in place of an earlier one, which would misname these tokens

if args.input is None:
    try:
        dataset = load_dataset("openwebtext", num_proc=args.num_proc)["train"]
    except ConnectionError as e:
        sys.exit(f"error: {e}; pass --input with local .txt files instead")
else:
    if os.path.isdir(args.input):
        files, sample_by = sorted(glob.glob(os.path.join(args.input, "*.txt"))), "document"
        if not files:
            sys.exit(f"error: no .txt files in {args.input}")
    elif os.path.isfile(args.input):
        files, sample_by = [args.input], "paragraph"
    else:
        sys.exit(f"error: input not found: {args.input}")
    try:
        dataset = load_dataset("text", data_files=files, sample_by=sample_by)["train"]
    except Exception as e:  # datasets' own error, its cause (a file that is not UTF-8 text, ...) beneath
        sys.exit(f"error: cannot read {args.input}: {e.__cause__ or e}")
if len(dataset) < 2:
    sys.exit(f"error: need at least 2 documents (a folder's .txt files, or a file's paragraphs) to split into train "
             f"and val, got {len(dataset)}")

# a float test_size is rounded up to whole documents, so even a tiny corpus gets one val document
split_dataset = dataset.train_test_split(test_size=args.test_size, seed=2357, shuffle=True)
split_dataset["val"] = split_dataset.pop("test")


def tokenize(example):
    ids = encode(example["text"]) + [end_of_text]
    return {"ids": ids, "len": len(ids)}


tokenized = split_dataset.map(tokenize, remove_columns=["text"], desc="tokenizing", num_proc=args.num_proc)

os.makedirs(args.out_dir, exist_ok=True)
for split, dset in tokenized.items():
    n_tokens = int(np.sum(dset.with_format("numpy")["len"]))
    path = os.path.join(args.out_dir, f"{split}.bin")
    # the ids fit (preparing_tokenizer checks); a memmap lets the file be written in the pieces larger corpora need
    arr = np.memmap(path, dtype=np.uint16, mode="w+", shape=(n_tokens,))
    num_shards = min(1024, len(dset))
    idx = 0
    for i in tqdm(range(num_shards), desc=f"writing {path}"):
        shard = dset.shard(num_shards=num_shards, index=i, contiguous=True).with_format("numpy")
        ids = np.concatenate(shard["ids"])
        arr[idx:idx + len(ids)] = ids
        idx += len(ids)
    arr.flush()
    print(f"{split} has {n_tokens:,} tokens in {len(dset):,} documents")
