"""
Weights in and out, against transformers as the independent reference: random tiny GPT2LMHeadModel and
LlamaForCausalLM (tied and untied, a head size other than n_embd / n_head, RMSNorm's eps other than ours) saved with
save_pretrained load through init_from's path (hf.load) with transformers' logits in fp32; sample.py decodes
greedily what generate(do_sample=False) does; train.py takes a few steps from them; a model trained here, exported
by export.py, loads in transformers with our logits; a checkpoint in nanoGPT's layout resumes (its AdamW state
matched by name) and samples; what cannot be loaded is a one-line error.
"""
import json
import os

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

import checkpoint
import hf
from model import GPTConfig, GPT
from test_reference import randomize
from test_train import TINY, run, user_error
from conftest import SHAKESPEARE

VOCAB, BLOCK, BATCH, TOL = 50257, 32, 2, 1e-5  # GPT-2's vocabulary: sample.py and train.py read GPT-2 BPE
FROM_FOLDER = [a for a in TINY if not a.startswith(('--n_', '--block_size', 'config/'))]  # the model is the folder's


def gpt2_folder(path, tie=True):
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=BLOCK, n_embd=32, n_layer=2, n_head=4, resid_pdrop=0.0,
                     activation_function='gelu_new', embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=tie)
    return save(GPT2LMHeadModel(cfg), path)


def llama_folder(path, tie=False, vocab_size=VOCAB, **kw):
    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=80, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=BLOCK,
                      rms_norm_eps=1e-5, rope_theta=500.0, tie_word_embeddings=tie, **kw)
    return save(LlamaForCausalLM(cfg), path)


def save(reference, path):
    torch.manual_seed(0)
    randomize(reference)
    reference.float().eval().save_pretrained(path)
    return reference


def ours(path):
    args, weights = hf.load(str(path))
    model = GPT(GPTConfig(**args)).eval()
    model.load_state_dict(checkpoint.matched(model.state_dict(), weights, path))
    return model


def assert_same_logits(model, reference):
    """Our last logits for every prefix against the reference's, run in float64, within TOL of the largest."""
    idx = torch.randint(VOCAB, (BATCH, BLOCK), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ref = reference.double()(idx).logits
        reference.float()
        for t in range(1, BLOCK + 1):
            err = (model(idx[:, :t])[0][:, 0].double() - ref[:, t - 1]).abs().max().item()
            assert err <= TOL * ref.abs().max().item(), f"prefix of {t}: logits differ by {err:.3e}"


@pytest.mark.parametrize("arch, tie", [('gpt2', True), ('gpt2', False), ('llama', True), ('llama', False)])
def test_a_transformers_folder_loads_with_its_logits(arch, tie, tmp_path):
    reference = (gpt2_folder if arch == 'gpt2' else llama_folder)(tmp_path, tie=tie)
    model = ours(tmp_path)
    assert model.config.tie_embeddings == tie and model.config.arch == arch
    assert (model.lm_head.weight is model.transformer.wte.weight) == tie
    if arch == 'llama':
        assert (model.config.head_dim, model.config.norm_eps, model.config.mlp_hidden) == (16, 1e-5, 80)
    assert_same_logits(model, reference)


@pytest.mark.parametrize("arch, case", [('gpt2', 'another head'), ('gpt2', 'eps 0'), ('llama', 'another head'),
                                        ('llama', 'eps 0'), ('llama', 'rope_theta twice')])
def test_a_folder_reads_as_transformers_reads_it(arch, case, tmp_path, capsys):
    """What transformers reads its own way: a tied config whose file holds a head other than the embedding (it loads
    untied), a norm eps of 0 (not the default), rope_parameters' rope_theta beside a stale top-level one."""
    (gpt2_folder if arch == 'gpt2' else llama_folder)(tmp_path, tie=True)
    config = json.loads((tmp_path / 'config.json').read_text())
    if case == 'another head':
        from safetensors.torch import load_file, save_file
        weights = load_file(tmp_path / 'model.safetensors')
        weights['lm_head.weight'] = torch.randn(VOCAB, 32, generator=torch.Generator().manual_seed(2))
        save_file(weights, tmp_path / 'model.safetensors', metadata={'format': 'pt'})
    elif case == 'eps 0':
        config['layer_norm_epsilon' if arch == 'gpt2' else 'rms_norm_eps'] = 0.0
    else:
        assert config['rope_parameters']['rope_theta'] == 500.0
        config['rope_theta'] = 10000.0
    (tmp_path / 'config.json').write_text(json.dumps(config))
    model = ours(tmp_path)
    assert model.config.tie_embeddings == (case != 'another head')
    assert ("loaded untied, as transformers loads it" in capsys.readouterr().out) == (case == 'another head')
    assert_same_logits(model, AutoModelForCausalLM.from_pretrained(tmp_path, dtype=torch.float32).eval())


def test_a_gpt2_size_comes_from_the_hub(tmp_path, monkeypatch):
    """init_from='gpt2-medium' (a size, as nanoGPT names them): huggingface_hub's snapshot_download of the
    openai-community repository, config.json and model.safetensors only (here a stand-in serving a tiny folder);
    without a network, a one-line error that names a local copy as the way out."""
    import huggingface_hub
    reference, asked = gpt2_folder(tmp_path), []
    monkeypatch.setattr(huggingface_hub, 'snapshot_download',
                        lambda repo_id, **kw: asked.append((repo_id, kw)) or str(tmp_path))
    assert_same_logits(ours('gpt2-medium'), reference)
    assert asked == [('openai-community/gpt2-medium', dict(allow_patterns=['config.json', 'model.safetensors']))]

    def offline(repo_id, **kw):
        raise OSError("no network here\n(a second line)")
    monkeypatch.setattr(huggingface_hub, 'snapshot_download', offline)
    with pytest.raises(ValueError, match=r"^cannot download gpt2 from the Hugging Face hub \(no network here\):"
                                         r" pass the path of a local copy instead$"):
        hf.load('gpt2')


# config.json of real models as published on the hub, with their parameter counts
REAL = {'SmolLM2-135M': (134_515_008, dict(
            model_type='llama', hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
            num_key_value_heads=3, head_dim=64, hidden_act='silu', max_position_embeddings=8192, rms_norm_eps=1e-5,
            rope_theta=100000, rope_scaling=None, attention_bias=False, mlp_bias=False, tie_word_embeddings=True,
            vocab_size=49152)),
        'TinyLlama-1.1B': (1_100_048_384, dict(
            model_type='llama', hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
            num_attention_heads=32, num_key_value_heads=4, hidden_act='silu', max_position_embeddings=2048,
            rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=False, vocab_size=32000)),
        'gpt2-xl': (1_557_611_200, dict(
            model_type='gpt2', n_embd=1600, n_layer=48, n_head=25, n_positions=1024, activation_function='gelu_new',
            layer_norm_epsilon=1e-5, vocab_size=50257))}


@pytest.mark.parametrize("name", REAL)
def test_real_models_map_at_full_size(name, tmp_path):
    """Every tensor of the real model (built by transformers from its config.json, on the meta device: shapes, no
    memory) goes to a parameter of ours of the same shape, and the counts are the published ones."""
    count, config = REAL[name]
    (tmp_path / 'config.json').write_text(json.dumps(config))
    args = hf.model_args(hf.read_config(tmp_path), tmp_path)
    with torch.device('meta'):
        reference = (GPT2LMHeadModel(GPT2Config(**config)) if config['model_type'] == 'gpt2'
                     else LlamaForCausalLM(LlamaConfig(**config)))
        model = GPT(GPTConfig(**args))
    checkpoint.matched(model.state_dict(), hf.ours_from_hf(reference.state_dict(), args, name), name)
    assert sum(p.numel() for p in model.parameters()) == reference.num_parameters() == count


def test_the_shards_or_a_pickle_load_alike(tmp_path):
    reference = llama_folder(tmp_path / 'one')
    reference.save_pretrained(tmp_path / 'shards', max_shard_size='200KB')
    assert len([f for f in os.listdir(tmp_path / 'shards') if f.endswith('.safetensors')]) > 1
    (tmp_path / 'bin').mkdir()  # an older checkpoint's layout (transformers now writes safetensors only)
    (tmp_path / 'bin' / 'config.json').write_text((tmp_path / 'one' / 'config.json').read_text())
    torch.save(reference.state_dict(), tmp_path / 'bin' / 'pytorch_model.bin')
    one = ours(tmp_path / 'one').state_dict()
    for folder in ('shards', 'bin'):
        other = ours(tmp_path / folder).state_dict()
        assert all(torch.equal(one[k], other[k]) for k in one), folder
    # a model.safetensors beside another model's shards: the single file is read, as transformers reads it
    with torch.no_grad():
        for p in reference.parameters():
            p.add_(1.0)
    reference.save_pretrained(tmp_path / 'other', max_shard_size='200KB')
    for name in os.listdir(tmp_path / 'other'):
        if name.startswith('model-') or name.endswith('.index.json'):
            os.replace(tmp_path / 'other' / name, tmp_path / 'one' / name)
    both = ours(tmp_path / 'one').state_dict()
    assert all(torch.equal(one[k], both[k]) for k in one)
    assert_same_logits(ours(tmp_path / 'one'), AutoModelForCausalLM.from_pretrained(tmp_path / 'one').float().eval())


@pytest.mark.parametrize("arch", ['gpt2', 'llama'])
def test_sample_and_train_from_a_folder(arch, tmp_path):
    """GPT-2 BPE: for GPT-2 as its folder has no tokenizer, for the LLaMA-style one as its folder's tokenizer.json."""
    reference = (gpt2_folder if arch == 'gpt2' else llama_folder)(tmp_path / 'hf')
    if arch == 'llama':
        from tokenizers import ByteLevelBPETokenizer
        from data.common import gpt2_bpe_files
        for name in ('vocab.json', 'merges.txt'):
            (tmp_path / 'hf' / name).write_text(gpt2_bpe_files()[name], encoding='utf-8')
        ByteLevelBPETokenizer(str(tmp_path / 'hf' / 'vocab.json'), str(tmp_path / 'hf' / 'merges.txt')).save(
            str(tmp_path / 'hf' / 'tokenizer.json'))
    p = run('sample.py', f'--init_from={tmp_path / "hf"}', '--device=cpu', '--num_samples=1', '--max_new_tokens=20',
            '--temperature=0.0', '--start=ROMEO:')
    tokenizer = tmp_path / 'hf' / 'tokenizer.json' if arch == 'llama' else 'GPT-2 BPE'
    assert f"the tokenizer: {tokenizer}\n" in p.stdout, p.stdout
    from data.common import gpt2_encoding
    enc = gpt2_encoding()
    prompt = torch.tensor([enc.encode('ROMEO:')])
    with torch.no_grad():
        want = reference.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=20, do_sample=False,
                                  pad_token_id=0)
    assert p.stdout.split('---------------')[0].rstrip('\n').endswith(enc.decode(want[0].tolist())), p.stdout

    data = tmp_path / 'shakespeare'
    run('data/shakespeare/prepare.py', SHAKESPEARE, f'--out_dir={data}')
    args = FROM_FOLDER + ['--gradient_accumulation_steps=1']
    p = run('train.py', *args, f'--init_from={tmp_path / "hf"}', f'--dataset={data}', f'--out_dir={tmp_path / "out"}',
            '--device=cpu', '--block_size=8', '--max_iters=3', '--eval_interval=3', '--log_interval=1')
    assert f"initialising from {tmp_path / 'hf'}" in p.stdout and 'iter 3: loss' in p.stdout, p.stdout
    p = run('train.py', *args, '--init_from=resume', f'--dataset={data}', f'--out_dir={tmp_path / "out"}',
            '--device=cpu', '--max_iters=4', '--eval_interval=4', '--log_interval=1')  # the checkpoint's model
    assert 'resumed at iter 4' in p.stdout and 'iter 4: loss' in p.stdout, p.stdout


@pytest.mark.parametrize("arch", ['gpt2', 'llama'])
def test_export_round_trip(arch, data_root, tmp_path):
    out, folder = tmp_path / 'out', tmp_path / 'hf'
    run('train.py', *TINY, f'--arch={arch}', f'--dataset={data_root}/shakespeare_char', f'--out_dir={out}',
        '--device=cpu', '--max_iters=3', '--eval_interval=3')
    p = run('export.py', f'--out_dir={out}', f'--hf_dir={folder}')
    assert 'the tokenizer: the characters of' in p.stdout and os.path.exists(folder / 'meta.json'), p.stdout
    assert AutoConfig.from_pretrained(folder).bos_token_id is None  # GPT-2 BPE's 50256 is no character
    # the folder samples and trains here again, its characters read from the meta.json export.py copied
    p = run('sample.py', f'--init_from={folder}', '--device=cpu', '--num_samples=1', '--max_new_tokens=5',
            '--start=ROMEO:')
    assert f"the tokenizer: the characters of {folder / 'meta.json'}" in p.stdout and 'ROMEO:' in p.stdout, p.stdout
    run('train.py', *TINY, f'--arch={arch}', f'--init_from={folder}', f'--dataset={data_root}/shakespeare_char',
        f'--out_dir={tmp_path / "again"}', '--device=cpu', '--max_iters=1', '--eval_interval=1')
    reference = AutoModelForCausalLM.from_pretrained(folder).float().eval()
    ckpt = checkpoint.load(out / 'ckpt.pt', 'cpu')
    model = GPT(GPTConfig(**ckpt['model_args'])).eval()
    model.load_state_dict(ckpt['model'])
    idx = torch.randint(model.config.vocab_size, (BATCH, 8))
    with torch.no_grad():
        ref = reference.double()(idx).logits[:, -1]
        err = (model(idx)[0][:, 0].double() - ref).abs().max().item()
    assert err <= TOL * ref.abs().max().item(), err


def test_a_gpt2_bpe_export_has_the_tokenizer(tmp_path):
    from transformers import AutoTokenizer
    gpt2_folder(tmp_path / 'in')
    model = ours(tmp_path / 'in')
    from data.common import gpt2_encoding, gpt2_bpe_files
    hf.save(model, tmp_path / 'out', gpt2_bpe_files())
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / 'out')
    assert tokenizer('Hello world')['input_ids'] == gpt2_encoding().encode('Hello world')
    config = AutoConfig.from_pretrained(tmp_path / 'out')
    assert config.bos_token_id == config.eos_token_id == 50256 == tokenizer.eos_token_id
    assert_same_logits(ours(tmp_path / 'out'), AutoModelForCausalLM.from_pretrained(tmp_path / 'out').float().eval())


def test_a_folders_tokenizer_stays_with_the_run(tmp_path):
    """A LLaMA-style folder with its own tokenizer.json (1,000 tokens, not GPT-2's): prepare.py --tokenizer writes
    its tokens, and the tokenizer beside them; train.py keeps the tokenizer in the checkpoint, so sample.py and
    eval.py of the run, a resumed run's HellaSwag and export.py's folder read it (transformers' AutoTokenizer too,
    with the folder's bos and eos). The folder's model is the run's: a size asked for that differs is refused. A run
    from scratch on those tokens keeps their tokenizer; a model that reads another is refused them."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import AutoTokenizer
    source, data, out, exported = (tmp_path / name for name in ('hf', 'data', 'out', 'exported'))
    llama_folder(source, vocab_size=1000, bos_token_id=0, eos_token_id=1)
    os.remove(source / 'generation_config.json')  # as older folders: generate()'s ids in config.json alone
    with open(SHAKESPEARE, encoding='utf-8') as f:
        text = f.read()[:100_000]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([text], vocab_size=1000, special_tokens=['<s>', '</s>'])
    bpe.save(str(source / 'tokenizer.json'))
    (tmp_path / 'input.txt').write_text(text, encoding='utf-8')
    run('data/shakespeare/prepare.py', str(tmp_path / 'input.txt'), f'--out_dir={data}', f'--tokenizer={source}')
    import numpy as np
    assert np.fromfile(data / 'val.bin', dtype=np.uint16).tolist() == bpe.encode(text[int(0.9 * len(text)):]).ids

    args = FROM_FOLDER + ['--gradient_accumulation_steps=1', f'--dataset={data}', f'--out_dir={out}', '--device=cpu',
             '--block_size=16', '--log_interval=1']
    user_error(run('train.py', *args, f'--init_from={source}', '--n_layer=3', '--max_iters=1', check=False),
               "has n_layer=2 but this run asks for n_layer=3: the model is the folder's")
    run('train.py', *args, f'--init_from={source}', '--max_iters=2', '--eval_interval=2')
    os.rename(source, tmp_path / 'moved')  # from here on the checkpoint's copy is the only one
    hellaswag = tmp_path / 'hellaswag.jsonl'
    hellaswag.write_text(json.dumps(dict(ctx='ROMEO:', endings=['a', 'b', 'c', 'd'], label=0)) + '\n')
    p = run('train.py', *args, '--init_from=resume', '--max_iters=3', '--eval_interval=3', f'--hellaswag={hellaswag}')
    assert 'step 3: hellaswag: 1 examples, acc ' in p.stdout, p.stdout
    p = run('eval.py', f'--out_dir={out}', f'--hellaswag={hellaswag}', '--device=cpu')
    assert 'hellaswag: 1 examples, acc ' in p.stdout, p.stdout
    p = run('sample.py', f'--out_dir={out}', '--device=cpu', '--num_samples=1', '--max_new_tokens=5',
            '--start=ROMEO:')
    assert f"the tokenizer: {source / 'tokenizer.json'}\n" in p.stdout, p.stdout

    p = run('export.py', f'--out_dir={out}', f'--hf_dir={exported}')
    assert f"the tokenizer: {source / 'tokenizer.json'}" in p.stdout, p.stdout
    tokenizer = AutoTokenizer.from_pretrained(exported)
    assert tokenizer('ROMEO: What,')['input_ids'] == bpe.encode('ROMEO: What,').ids
    config = AutoConfig.from_pretrained(exported)
    assert (config.bos_token_id, config.eos_token_id) == (0, 1)
    run('export.py', f'--out_dir={out}', f'--hf_dir={exported}')  # again, over its own files

    # from scratch on the same tokens the dataset's tokenizer is the run's; a model of another one is refused them
    scratch = tmp_path / 'scratch'
    run('train.py', *args, '--n_layer=1', '--n_head=2', '--n_embd=32', f'--out_dir={scratch}', '--max_iters=1',
        '--eval_interval=1')
    p = run('sample.py', f'--out_dir={scratch}', '--device=cpu', '--num_samples=1', '--max_new_tokens=3',
            '--start=ROMEO:')
    assert f"the tokenizer: {data / 'tokenizer.json'}\n" in p.stdout, p.stdout
    assert checkpoint.load(str(scratch / 'ckpt.pt'), 'cpu')['model_args']['vocab_size'] == 1024  # its 1,000, padded
    run('train.py', *args, '--init_from=resume', f'--out_dir={scratch}', '--max_iters=2', '--eval_interval=2')
    gpt2_folder(tmp_path / 'gpt2')
    user_error(run('train.py', *args, f'--init_from={tmp_path / "gpt2"}', '--max_iters=1', check=False),
               f"{data}'s tokens are its tokenizer.json's, which the model was not trained with (it has no "
               f"tokenizer.json)")


def test_what_an_export_or_a_tokenizer_cannot_take_is_a_one_line_error(data_root, tmp_path):
    """export.py refuses a file, and a folder holding another model's files that transformers could read instead;
    a tokenizer.json that cannot be read, or with more tokens than the model, a HellaSwag file without examples, a
    whole checkpoint's path in no folder and a run's folder given as a Hugging Face one are one-line errors."""
    out = tmp_path / 'out'
    run('train.py', *TINY, f'--dataset={data_root}/shakespeare_char', f'--out_dir={out}', '--device=cpu',
        '--max_iters=1', '--eval_interval=1')
    (tmp_path / 'a_file').write_text('')
    user_error(run('export.py', f'--out_dir={out}', f'--hf_dir={tmp_path / "a_file"}', check=False), 'is a file')
    (tmp_path / 'used').mkdir()
    (tmp_path / 'used' / 'model.safetensors.index.json').write_text('{}')
    user_error(run('export.py', f'--out_dir={out}', f'--hf_dir={tmp_path / "used"}', check=False),
               'holds model.safetensors.index.json', 'give a new or empty folder')
    user_error(run('eval.py', f'--out_dir={out}', f'--hellaswag={tmp_path / "a_file"}', '--device=cpu',
                   check=False), 'holds no HellaSwag examples')
    user_error(run('export.py', f'--out_dir={out}', '--hf_dir=', f'--whole_ckpt={tmp_path / "nowhere" / "ckpt.pt"}',
                   check=False), "must be a file's path in a folder that exists")
    user_error(run('sample.py', f'--init_from={out}', '--device=cpu', check=False),
               f"it is a run's folder: --init_from=resume --out_dir={out}")
    from tokenizers import ByteLevelBPETokenizer
    llama_folder(tmp_path / 'small', vocab_size=260)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(['ROMEO: what light through yonder window breaks'] * 10, vocab_size=280)
    bpe.save(str(tmp_path / 'small' / 'tokenizer.json'))
    assert bpe.get_vocab_size() > 260
    user_error(run('sample.py', f'--init_from={tmp_path / "small"}', '--device=cpu', check=False),
               'tokens, more than the model\'s 260')
    (tmp_path / 'small' / 'tokenizer.json').write_text('{"not": "a tokenizer"')
    user_error(run('sample.py', f'--init_from={tmp_path / "small"}', '--device=cpu', check=False),
               'cannot be read by the tokenizers library')


def nanogpt_checkpoint(path, data_root):
    """A checkpoint as nanoGPT's train.py writes it (its compiled model's names, its AdamW over its own parameter
    order, no loss scaler), of a model trained a few steps so that every moment differs."""
    torch.manual_seed(0)
    vocab_size = json.loads((data_root / 'shakespeare_char' / 'meta.json').read_text())['vocab_size']
    model_args = dict(n_layer=2, n_head=2, n_embd=64, block_size=64, bias=True, vocab_size=vocab_size, dropout=0.0)
    model = GPT(GPTConfig(**model_args))
    names = ['transformer.wte.weight', 'transformer.wpe.weight'] + [n for n, _ in model.named_parameters()
                                                                     if n.startswith('transformer.h.')]
    names += ['transformer.ln_f.weight', 'transformer.ln_f.bias']
    params = dict(model.named_parameters())
    decay = [params[n] for n in names if params[n].dim() >= 2]
    optimizer = torch.optim.AdamW([dict(params=decay, weight_decay=0.1),
                                   dict(params=[params[n] for n in names if params[n].dim() < 2], weight_decay=0.0)],
                                  lr=1e-3, betas=(0.9, 0.99))
    for _ in range(3):
        idx = torch.randint(vocab_size, (2, 64))
        model(idx, idx)[1].backward()
        optimizer.step()
    sd = {'_orig_mod.' + n: model.state_dict()[n] for n in names + ['lm_head.weight']}  # nanoGPT's order
    config = dict(dataset=str(data_root / 'shakespeare_char'), batch_size=8, learning_rate=1e-3)
    torch.save(dict(model=sd, optimizer=optimizer.state_dict(), model_args=model_args, iter_num=3,
                    best_val_loss=4.0, config=config), path / 'ckpt.pt')
    return model, {n: optimizer.state[params[n]] for n in names}


def test_a_nanogpt_checkpoint_resumes_and_samples(data_root, tmp_path):
    model, state = nanogpt_checkpoint(tmp_path, data_root)
    ckpt = checkpoint.load(str(tmp_path / 'ckpt.pt'), 'cpu')
    ours_model = GPT(GPTConfig(**ckpt['model_args']))
    ours_model.load_state_dict(checkpoint.matched(ours_model.state_dict(), ckpt['model'], 'nanoGPT'))
    assert all(torch.equal(a, b) for a, b in zip(ours_model.state_dict().values(), model.state_dict().values()))
    optimizer = ours_model.configure_optimizers(0.1, 1e-3, (0.9, 0.99), 'cpu')
    name = {id(p): n for n, p in ours_model.named_parameters()}
    names = [name[id(p)] for g in optimizer.param_groups for p in g['params']]
    assert names.index('transformer.wpe.weight') != 1  # our order differs from nanoGPT's
    checkpoint.restore(ckpt, optimizer, torch.amp.GradScaler('cpu', enabled=False), 0, 1, ours_model)
    for p in ours_model.parameters():
        assert torch.equal(optimizer.state[p]['exp_avg'], state[name[id(p)]]['exp_avg']), name[id(p)]
    other = ours_model.configure_optimizers(0.0, 1e-3, (0.8, 0.9), 'cpu')  # a run that asks for other settings
    checkpoint.restore(ckpt, other, torch.amp.GradScaler('cpu', enabled=False), 0, 1, ours_model)
    assert all(g['betas'] == (0.8, 0.9) and g['weight_decay'] == 0.0 for g in other.param_groups)  # the run's
    assert all(torch.equal(other.state[p]['exp_avg'], optimizer.state[p]['exp_avg']) for p in ours_model.parameters())

    base = [*TINY, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--device=cpu']
    p = run('train.py', *base, '--init_from=resume', '--max_iters=5', '--eval_interval=5', '--log_interval=1')
    assert 'resumed at iter 3' in p.stdout and 'iter 5: loss' in p.stdout, p.stdout
    p = run('sample.py', f'--out_dir={tmp_path}', '--device=cpu', '--num_samples=1', '--max_new_tokens=5',
            '--start=ROMEO:')
    assert 'ROMEO:' in p.stdout, p.stdout


def test_what_cannot_load_is_a_one_line_error(data_root, tmp_path):
    bert = tmp_path / 'bert'
    bert.mkdir()
    (bert / 'config.json').write_text(json.dumps({'model_type': 'bert'}))
    llama_folder(tmp_path / 'scaled', rope_scaling={'rope_type': 'linear', 'factor': 2.0})
    llama_folder(tmp_path / 'biased', attention_bias=True)
    gpt2_folder(tmp_path / 'mismatch')
    config = json.loads((tmp_path / 'mismatch' / 'config.json').read_text())
    (tmp_path / 'mismatch' / 'config.json').write_text(json.dumps(config | {'n_embd': 64}))
    gpt2_folder(tmp_path / 'truncated')
    weights = tmp_path / 'truncated' / 'model.safetensors'
    weights.write_bytes(weights.read_bytes()[:1000])
    empty = tmp_path / 'empty'
    empty.mkdir()
    (empty / 'config.json').write_text((tmp_path / 'mismatch' / 'config.json').read_text())
    cases = {bert: "model_type='bert' is not supported", tmp_path / 'scaled': 'rope scaling',
             tmp_path / 'biased': 'biases in the attention', tmp_path / 'mismatch': 'has shape',
             tmp_path / 'truncated': 'cannot read the weights', empty: 'no model.safetensors',
             tmp_path / 'nowhere': "is neither one of"}
    for folder, phrase in cases.items():
        with pytest.raises(ValueError, match=phrase):
            ours(folder)  # shapes are checked as the model takes the weights
    config = json.loads((tmp_path / 'scaled' / 'config.json').read_text()) | {'rope_parameters': None}
    for none in ({'rope_type': 'default'}, {'type': 'default'}):  # no scaling, as transformers 4 and older say it
        assert hf.model_args(config | {'rope_scaling': none}, 'unscaled')['arch'] == 'llama'
    user_error(run('train.py', *TINY, f'--init_from={tmp_path / "scaled"}', f'--dataset={data_root}/shakespeare_char',
                   '--device=cpu', check=False),
               'rope scaling')
    user_error(run('sample.py', f'--init_from={tmp_path / "mismatch"}', '--device=cpu', check=False),
               'does not fit the model', 'has shape')
    with pytest.raises(ValueError, match="GPT2LMHeadModel has no grouped-query attention"):  # and none goes out
        hf.save(GPT(GPTConfig(n_layer=1, n_head=4, n_kv_head=2, n_embd=32, block_size=8, vocab_size=64)),
                tmp_path / 'gqa', {})


def test_hellaswag_cuts_long_rows_from_the_left_and_refuses_bad_examples(tmp_path):
    """Context and ending longer than block_size: the row is their last block_size tokens (as sampling crops), and
    the ending's losses are those of its tokens left in the row, each after a token before it. An example without
    four endings, or with a label not among them, is refused when the file is read."""
    import torch.nn.functional as F
    import hellaswag as hs
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=1, n_head=2, n_embd=32, block_size=8, vocab_size=64)).eval()
    encode = lambda text: [ord(ch) % 64 for ch in text]
    ctx, endings = "abcdefghij", ["klm", "n", "opqrstuvwxyz", "st"]
    with torch.no_grad():
        summed, mean = hs.ending_losses(model, [(ctx, endings, 0)], encode, 'cpu')
        for j, ending in enumerate(endings):
            e = encode(' ' + ending)
            row = torch.tensor([(encode(ctx) + e)[-8:]])
            losses = F.cross_entropy(model(row, all_logits=True)[0][0, :-1], row[0, 1:], reduction='none')
            losses = losses[-min(len(e), 7):]  # the ending's tokens that follow another token of the row
            assert torch.allclose(summed[0, j], losses.sum()) and torch.allclose(mean[0, j], losses.mean())
    for bad in (dict(ctx="a", endings=["b", "c", "d"], label=0), dict(ctx="a", endings=["b", "c", "d", "e"], label=4)):
        (tmp_path / 'bad.jsonl').write_text(json.dumps(bad) + '\n')
        with pytest.raises(ValueError, match="example 1: .* HellaSwag's have four and the label of one"):
            hs.read(str(tmp_path / 'bad.jsonl'))


def test_hellaswag_scores_as_a_direct_computation(tmp_path):
    """eval.py's batched, padded scores against transformers' model run on each ending alone: the labels are the
    direct computation's answers by summed loss, so acc must be 5/5 and acc_norm the answers by mean loss agreeing."""
    import torch.nn.functional as F
    from data.common import gpt2_encoding
    reference = gpt2_folder(tmp_path / 'hf')
    enc = gpt2_encoding()
    contexts = ["The cat sat", "A man is cooking dinner and", "Rain fell", "She opened the old book, and then",
                "The team"]
    endings = [["on the mat.", "away.", "in a tree with birds", "up"], ["burns it.", "smiles", "eats it all now.", "x"],
               ["hard.", "on the roof all night", "down", "again and again."], ["read.", "slept", "it fell.", "wept."],
               ["won the cup.", "lost", "went home early that day.", "cheered"]]
    examples, agree = [], 0
    for ctx, ends in zip(contexts, endings):
        summed, mean = [], []
        for ending in ends:
            c, e = enc.encode_ordinary(ctx), enc.encode_ordinary(' ' + ending)
            ids = torch.tensor([c + e])
            with torch.no_grad():
                losses = F.cross_entropy(reference(ids).logits[0, len(c) - 1:-1], ids[0, len(c):], reduction='none')
            summed.append(losses.sum().item())
            mean.append(losses.mean().item())
        label = min(range(4), key=summed.__getitem__)
        agree += label == min(range(4), key=mean.__getitem__)
        examples.append(dict(ctx=ctx, endings=ends, label=label))
    (tmp_path / 'hs.jsonl').write_text(''.join(json.dumps(x) + '\n' for x in examples))
    p = run('eval.py', f'--init_from={tmp_path / "hf"}', f'--hellaswag={tmp_path / "hs.jsonl"}', '--device=cpu',
            '--examples_per_forward=2')
    assert f"acc 1.0000 (5/5), acc_norm {agree / 5:.4f} ({agree}/5)" in p.stdout, p.stdout

    # train.py scores the same file at every eval: at iter 0 the weights are the folder's
    import numpy as np
    for split in ('train', 'val'):
        np.random.default_rng(0).integers(VOCAB, size=4096).astype(np.uint16).tofile(tmp_path / f'{split}.bin')
    p = run('train.py', *FROM_FOLDER, f'--init_from={tmp_path / "hf"}', f'--dataset={tmp_path}', '--block_size=16',
            f'--out_dir={tmp_path / "out"}', f'--hellaswag={tmp_path / "hs.jsonl"}', '--device=cpu', '--max_iters=0',
            '--eval_interval=1', '--eval_iters=1', '--gradient_accumulation_steps=1')
    assert f"step 0: hellaswag: 5 examples, acc 1.0000 (5/5), acc_norm {agree / 5:.4f} ({agree}/5)\n" in p.stdout, \
        p.stdout
    user_error(run('train.py', *FROM_FOLDER, f'--init_from={tmp_path / "hf"}', f'--dataset={tmp_path}',
                   '--block_size=16', f'--hellaswag={tmp_path / "none.jsonl"}', '--device=cpu', check=False),
               'cannot read HellaSwag examples', 'none.jsonl')
    (tmp_path / 'char').mkdir()  # a character-level dataset
    (tmp_path / 'char' / 'meta.json').write_text(json.dumps({'chars': [chr(i) for i in range(65, 91)]}))
    for split in ('train', 'val'):
        np.zeros(4096, dtype=np.uint16).tofile(tmp_path / 'char' / f'{split}.bin')
    user_error(run('train.py', *TINY, f'--dataset={tmp_path / "char"}', f'--hellaswag={tmp_path / "hs.jsonl"}',
                   '--device=cpu', check=False), 'HellaSwag needs a model of GPT-2 BPE')
