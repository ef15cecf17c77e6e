"""
What survives a crash, and what is refused, through the scripts as a user runs them (CPU;
DDP on two gloo processes):
- a run killed and resumed ends bitwise where the uninterrupted run ends (weights,
  optimizer, fp16 scaler, data order, dropout's generators), on one process and on two;
- checkpoints are written atomically: a writer killed mid-write leaves the last one whole,
  ckpt.pt and FSDP's sharded folders alike;
- checkpoints and vocabularies load without running code; damaged or foreign files and
  settings that do not fit are one-line errors;
- SIGTERM / SIGINT: the step ends, a checkpoint is saved, the exit is clean; under DDP a
  signal to one rank stops all of them at the same step;
- non-finite losses and gradients: skipped and counted, or the run stops (skip_nonfinite);
  fp16 overflows are the GradScaler's;
- bad token files and vocabularies are refused at start-up, naming the file and the fix;
- a Triton kernel that fails in kernels='auto' leaves its op to PyTorch with a warning;
- a DDP or FSDP rank that dies or hangs ends the others with a message, within ddp_timeout.
"""
import os
import sys
import time
import json
import signal
import pickle
import subprocess

import numpy as np
import pytest
import torch

from conftest import SHAKESPEARE
from test_train import ROOT, TINY, run, background, user_error
import checkpoint
from data.common import read_meta

BASE = [*TINY, '--device=cpu', '--log_interval=1', '--dropout=0.1', '--eval_interval=10', '--lr_decay_iters=40']
TORCHRUN = '-m torch.distributed.run --standalone --nproc_per_node=2'


def start(script, out_dir, *args, env=None):
    """A training run in the background (forked from tests/script_server.py), its output going to out_dir/log.txt."""
    os.makedirs(out_dir, exist_ok=True)
    return background(script, *args, f'--out_dir={out_dir}', log=os.path.join(out_dir, 'log.txt'),
                      env={'PYTHONUNBUFFERED': '1'} | (env or {}))


def wait_for(out_dir, text, proc, timeout=300):
    """Block until `text` is in the run's log; returns the log."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        log = open(os.path.join(out_dir, 'log.txt')).read()
        if text in log:
            return log
        assert proc.poll() is None, f"ended before {text!r}:\n{log[-3000:]}"
        time.sleep(0.05)
    raise AssertionError(f"no {text!r} after {timeout}s")


def finish(proc, out_dir, timeout=300):
    proc.wait(timeout=timeout)
    return proc.returncode, open(os.path.join(out_dir, 'log.txt')).read()


def ranks_of(torchrun_pid):
    """{rank: pid} of the workers torchrun started (their RANK in /proc/<pid>/environ)."""
    ranks = {}
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/stat') as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
            if ppid == torchrun_pid:
                env = open(f'/proc/{pid}/environ', 'rb').read().split(b'\0')
                ranks[int(next(e for e in env if e.startswith(b'RANK=')).split(b'=')[1])] = int(pid)
        except (OSError, StopIteration):
            pass
    return ranks


def flat(x, name=''):
    """{path: leaf} of nested dicts, lists and tuples."""
    if isinstance(x, dict):
        return {k: v for key, item in x.items() for k, v in flat(item, f"{name}/{key}").items()}
    if isinstance(x, (list, tuple)):
        return {k: v for i, item in enumerate(x) for k, v in flat(item, f"{name}/{i}").items()}
    return {name: x}


def same_state(path_a, path_b):
    """Two checkpoints hold bitwise the same weights, optimizer and scaler state, iteration and generators."""
    a, b = (flat({k: torch.load(p, weights_only=True)[k] for k in ('model', 'optimizer', 'scaler', 'rng', 'iter_num')})
            for p in (path_a, path_b))
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]) if torch.is_tensor(a[k]) else a[k] == b[k], f"{k} differs"


def losses_text(log, first):
    """The iteration lines from `first` on, up to the timing (the exact printed losses)."""
    return [line.split(', time')[0] for line in log.splitlines()
            if line.startswith('iter ') and int(line.split()[1].rstrip(':')) >= first]


# -- exact resume ---------------------------------------------------------------------

@pytest.mark.parametrize("extra", [[], ['--optimizer=muon'], ['--dtype=float16']], ids=['adamw', 'muon', 'fp16'])
def test_killed_and_resumed_run_is_bitwise_the_uninterrupted_one(data_root, tmp_path, extra):
    args = [*BASE, f'--dataset={data_root}/shakespeare_char', '--max_iters=20', *extra]
    whole = start('train.py', tmp_path / 'whole', *args)
    killed = start('train.py', tmp_path / 'killed', *args)
    wait_for(tmp_path / 'killed', 'iter 13:', killed)  # past the checkpoint of iter 10
    killed.kill()  # SIGKILL: no chance to save anything
    killed.wait()
    resumed = start('train.py', tmp_path / 'killed', *args, '--init_from=resume')
    rc, log = finish(resumed, tmp_path / 'killed')
    assert rc == 0 and 'resumed at iter 10' in log, log
    rc, whole_log = finish(whole, tmp_path / 'whole')
    assert rc == 0, whole_log
    assert losses_text(log, 10) == losses_text(whole_log, 10) and len(losses_text(log, 10)) == 11
    same_state(tmp_path / 'whole' / 'ckpt.pt', tmp_path / 'killed' / 'ckpt.pt')


def test_ddp_signal_to_one_rank_stops_all_and_resumes_bitwise(data_root, tmp_path):
    args = ['train.py', *BASE, f'--dataset={data_root}/shakespeare_char', '--max_iters=12',
            '--gradient_accumulation_steps=2']
    whole = start(TORCHRUN, tmp_path / 'whole', *args)
    stopped = start(TORCHRUN, tmp_path / 'stopped', *args)
    wait_for(tmp_path / 'stopped', 'iter 4:', stopped)
    os.kill(ranks_of(stopped.pid)[1], signal.SIGTERM)  # rank 1 only: rank 0 learns of it through the stop flag
    rc, log = finish(stopped, tmp_path / 'stopped')
    assert rc == 0 and 'stopped by a signal to another rank at iter' in log, log
    at = torch.load(tmp_path / 'stopped' / 'ckpt.pt', weights_only=True)['iter_num']
    assert f"stopped by a signal to another rank at iter {at}," in log and f"iter {at}:" not in log
    rc, log = finish(start(TORCHRUN, tmp_path / 'stopped', *args, '--init_from=resume'), tmp_path / 'stopped')
    assert rc == 0 and f'resumed at iter {at}' in log, log
    rc, whole_log = finish(whole, tmp_path / 'whole')
    assert rc == 0, whole_log
    assert losses_text(log, at) == losses_text(whole_log, at)
    same_state(tmp_path / 'whole' / 'ckpt.pt', tmp_path / 'stopped' / 'ckpt.pt')


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=['SIGTERM', 'SIGINT'])
def test_a_signal_saves_at_the_step_boundary_and_exits_cleanly(data_root, tmp_path, sig):
    p = start('train.py', tmp_path, *BASE, f'--dataset={data_root}/shakespeare_char',
              '--max_iters=100000', '--always_save_checkpoint=False')
    wait_for(tmp_path, 'iter 3:', p)
    p.send_signal(sig)
    rc, log = finish(p, tmp_path, timeout=60)
    at = torch.load(tmp_path / 'ckpt.pt', weights_only=True)['iter_num']
    assert rc == 0 and f"stopped by {sig.name} at iter {at}, checkpoint saved" in log, log
    assert f"iter {at - 1}:" in log and f"iter {at}:" not in log  # the last step finished, no later one began


# -- checkpoint files -------------------------------------------------------------------

KILL_MID_WRITE = """
import os, signal, sys, torch
sys.path.insert(0, {root!r})
import checkpoint
checkpoint.save({{'iter_num': 1, 'w': torch.ones(1000)}}, {path!r})
save = torch.save
def half_then_die(obj, f):  # the process dies halfway through the new checkpoint's bytes
    import io
    buf = io.BytesIO()
    save(obj, buf)
    f.write(buf.getvalue()[:len(buf.getvalue()) // 2])
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
torch.save = half_then_die
checkpoint.save({{'iter_num': 2, 'w': torch.zeros(1000)}}, {path!r})
"""


def test_a_writer_killed_mid_write_leaves_the_last_checkpoint_whole(tmp_path):
    path = str(tmp_path / 'ckpt.pt')
    p = run('-c', KILL_MID_WRITE.format(root=ROOT, path=path), check=False)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert os.path.getsize(path + '.tmp') > 0  # the half-written new one, never renamed over the old
    ckpt = torch.load(path, weights_only=True)
    assert ckpt['iter_num'] == 1 and torch.equal(ckpt['w'], torch.ones(1000))


KILL_MID_SHARDED_WRITE = """
import os, signal, sys, torch
sys.path.insert(0, {root!r})
import torch.distributed as dist
from torch.distributed.checkpoint import FileSystemWriter
import checkpoint, parallel
from model import GPT, GPTConfig
dist.init_process_group('gloo', init_method='file://{root_file}', rank=0, world_size=1)
model = GPT(GPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=8, vocab_size=32, dropout=0.0))
parallel.shard(model, torch.float32, 'cpu')
optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), 'cpu')
info = dict(scaler={{}}, model_args={{}}, best_val_loss=0.0, config={{}})
checkpoint.save_sharded(info | {{'iter_num': 1}}, model, optimizer, {out_dir!r}, 0)
torch.save(model.state_dict()['lm_head.weight'].full_tensor(), {out_dir!r} + '/head.pt')
with torch.no_grad():
    model.lm_head.weight.zero_()
def die(*args, **kwargs):  # every shard written, the process killed before .metadata is renamed into place
    os.kill(os.getpid(), signal.SIGKILL)
FileSystemWriter.finish = die
checkpoint.save_sharded(info | {{'iter_num': 2}}, model, optimizer, {out_dir!r}, 0)
"""


def test_a_sharded_writer_killed_mid_write_leaves_the_last_checkpoint_whole(tmp_path):
    """FSDP's checkpoint (one gloo rank here): a writer killed after its shards but before DCP's .metadata leaves
    a folder that a resumed run passes over for the last whole one, which loads."""
    p = run('-c', KILL_MID_SHARDED_WRITE.format(root=ROOT, root_file=tmp_path / 'rendezvous', out_dir=str(tmp_path)),
            check=False)
    assert p.returncode == -signal.SIGKILL, p.stderr
    root = tmp_path / checkpoint.SHARDED
    assert sorted(os.listdir(root)) == ['iter_00000001', 'iter_00000002']
    assert os.listdir(root / 'iter_00000002') and not os.path.exists(root / 'iter_00000002' / '.metadata')
    assert checkpoint.latest(tmp_path) == str(root / 'iter_00000001')
    ckpt = checkpoint.load(checkpoint.latest(tmp_path), 'cpu')
    assert ckpt['iter_num'] == 1 and torch.equal(ckpt['model']['lm_head.weight'], torch.load(tmp_path / 'head.pt'))


class RunsCode:
    """Unpickling this runs code: it creates the file `marker`."""
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, 'w'))


def test_checkpoints_and_vocabularies_load_without_running_code(tmp_path):
    marker = str(tmp_path / 'code_ran')
    torch.save({'model': {}, 'x': RunsCode(marker)}, tmp_path / 'ckpt.pt')
    with pytest.raises(ValueError, match="cannot read checkpoint .* damaged, incomplete, or holds more than tensors"):
        checkpoint.load(str(tmp_path / 'ckpt.pt'), 'cpu')
    with open(tmp_path / 'meta.pkl', 'wb') as f:
        pickle.dump({'vocab_size': 2, 'itos': RunsCode(marker)}, f)
    with pytest.raises(ValueError, match="meta.pkl is not a readable vocabulary .it refers to _?io.open, "
                                         "and a pickle that does can run code"):
        read_meta(tmp_path)
    assert not os.path.exists(marker)
    (tmp_path / 'sharded').mkdir()  # FSDP's checkpoint folder: DCP's metadata is a pickle
    checkpoint.save({'iter_num': 1}, str(tmp_path / 'sharded' / 'meta.pt'))
    with open(tmp_path / 'sharded' / '.metadata', 'wb') as f:
        pickle.dump(RunsCode(marker), f)
    with pytest.raises(ValueError, match="cannot read checkpoint .*sharded .*io.open is not DCP's metadata"):
        checkpoint.load(str(tmp_path / 'sharded'), 'cpu')
    assert not os.path.exists(marker)
    with open(tmp_path / 'meta.pkl', 'wb') as f:  # nanoGPT's meta.pkl: plain dicts, read
        pickle.dump({'vocab_size': 2, 'itos': {0: 'a', 1: 'b'}, 'stoi': {'a': 0, 'b': 1}}, f)
    assert read_meta(tmp_path)['stoi'] == {'a': 0, 'b': 1}


OLD_CHECKPOINT = os.path.join(ROOT, 'tests', 'fixtures', 'ckpt-9606443.pt')
# how train.py at commit 9606443 wrote it, in a folder holding data/shakespeare_char (all of Tiny Shakespeare)
OLD_RUN = ['config/train_shakespeare_char.py', '--device=cpu', '--compile=False', '--n_layer=1', '--n_head=2',
           '--n_embd=16', '--block_size=16', '--batch_size=4', '--eval_iters=2', '--log_interval=1', '--dropout=0.0']


def test_a_checkpoint_written_before_the_redesign_resumes_and_samples(tmp_path):
    """tests/fixtures/ckpt-9606443.pt is train.py's checkpoint at commit 9606443 (OLD_RUN with --max_iters=3,
    --eval_interval=3, --cuda_graph=False): its keys, its config (data_root) and its optimizer state load here."""
    subprocess.run([sys.executable, os.path.join(ROOT, 'data/shakespeare_char/prepare.py'), SHAKESPEARE,
                    f'--out_dir={tmp_path}/data/shakespeare_char'], check=True, capture_output=True)
    (tmp_path / 'out').mkdir()
    (tmp_path / 'out' / 'ckpt.pt').write_bytes(open(OLD_CHECKPOINT, 'rb').read())
    script = lambda name, *args: run(os.path.join(ROOT, name), *args, cwd=tmp_path, check=False, timeout=300)
    p = script('train.py', *[os.path.join(ROOT, a) if a.startswith('config/') else a for a in OLD_RUN],
               '--out_dir=out', '--init_from=resume', '--max_iters=5', '--eval_interval=5')
    assert p.returncode == 0 and 'resumed at iter 3' in p.stdout and 'iter 5: loss' in p.stdout, p.stdout + p.stderr
    p = script('sample.py', '--out_dir=out', '--device=cpu', '--num_samples=1', '--max_new_tokens=5', '--start=ROMEO:')
    assert p.returncode == 0 and 'ROMEO:' in p.stdout, p.stdout + p.stderr


def test_damaged_or_unfitting_checkpoints_are_one_line_errors(data_root, tmp_path):
    args = [*BASE, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}']
    run('train.py', *args, '--max_iters=2')
    ckpt = tmp_path / 'ckpt.pt'
    good = ckpt.read_bytes()
    ckpt.write_bytes(good[:len(good) // 2])  # truncated
    user_error(run('train.py', *args, '--init_from=resume', check=False), 'cannot read checkpoint',
               'damaged, incomplete')
    user_error(run('sample.py', f'--out_dir={tmp_path}', '--device=cpu', check=False), 'cannot read checkpoint')
    torch.save({'weights': torch.ones(2)}, ckpt)
    user_error(run('train.py', *args, '--init_from=resume', check=False), 'not a checkpoint of train.py')
    ckpt.write_bytes(good)
    other = tmp_path / 'other' / 'shakespeare_char'  # the same text, another vocabulary
    other.mkdir(parents=True)
    for split in ('train', 'val'):
        (other / f'{split}.bin').write_bytes((data_root / 'shakespeare_char' / f'{split}.bin').read_bytes())
    meta = json.loads((data_root / 'shakespeare_char' / 'meta.json').read_text())
    (other / 'meta.json').write_text(json.dumps({'chars': meta['chars'] + ['\u00e9']}))
    V = len(meta['chars'])
    user_error(run('train.py', *args, f'--dataset={tmp_path}/other/shakespeare_char', '--init_from=resume',
                   check=False),
               f'has vocab_size={V} but this run asks for vocab_size={V + 1}', 'the vocabulary of')


# -- numerics ------------------------------------------------------------------------------

FAULTY_TRAIN = """
import sys, runpy, torch
sys.path.insert(0, {root!r})
import model
calls, forward = [0], model.GPT.forward

class BadGrad(torch.autograd.Function):  # a finite loss whose gradient is not
    forward = staticmethod(lambda ctx, x: x.clone())
    backward = staticmethod(lambda ctx, g: g * float({grad!r}))

def faulty(self, idx, targets=None):
    logits, loss = forward(self, idx, targets)
    if self.training:
        calls[0] += 1
        if calls[0] in {bad_loss_calls!r}:
            loss = loss * float('nan')
        if calls[0] in {bad_grad_calls!r}:
            loss = BadGrad.apply(loss)
    return logits, loss
model.GPT.forward = faulty
sys.argv = ['train.py', *{args!r}]
runpy.run_path('train.py', run_name='__main__')
"""


def train_with_faults(args, bad_loss=(), bad_grad=(), grad='nan'):
    """train.py with a NaN loss at these forward calls (1-based; one per step here) and a
    non-finite gradient behind a finite loss at those."""
    return run('-c', FAULTY_TRAIN.format(root=ROOT, args=list(args), bad_loss_calls=set(bad_loss),
                                        bad_grad_calls=set(bad_grad), grad=grad), check=False)


@pytest.mark.parametrize("optimizer", ['adamw', 'muon'])
@pytest.mark.parametrize("device", ['cpu', pytest.param('cuda', marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="the fused AdamW's and Muon's skip on the GPU"))])
def test_nonfinite_steps_are_skipped_and_counted(data_root, tmp_path, device, optimizer):
    # the faults come from Python at each forward call: the step launched from Python, not replayed from a graph
    p = train_with_faults([*BASE, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--max_iters=8',
                           f'--device={device}', f'--optimizer={optimizer}', '--cuda_graph=False'],
                          bad_loss=[3], bad_grad=[5, 6])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "iter 2: steps skipped for a non-finite loss or gradient: 1 in a row, 1 in all" in p.stdout
    assert "iter 5: steps skipped for a non-finite loss or gradient: 2 in a row, 3 in all" in p.stdout
    assert "3 step(s) skipped for a non-finite loss or gradient" in p.stdout
    ckpt = torch.load(tmp_path / 'ckpt.pt', weights_only=True)
    state = [t for s in ckpt['optimizer']['state'].values() for t in s.values() if t.is_floating_point()]
    assert torch.isfinite(torch.stack([t.float().sum() for t in [*ckpt['model'].values(), *state]])).all()


def test_nonfinite_steps_are_skipped_under_fsdp(data_root, tmp_path):
    """Two FSDP ranks, each meeting the faults at the same steps: every rank skips them alike, and the sharded
    checkpoint holds finite weights."""
    script = tmp_path / 'faulty_train.py'
    script.write_text(FAULTY_TRAIN.format(root=ROOT, args=[
        *BASE, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--max_iters=8',
        '--gradient_accumulation_steps=2', '--parallelism=fsdp'], bad_loss_calls={3}, bad_grad_calls={5, 6}, grad='nan'))
    p = run(f'-m torch.distributed.run --standalone --nproc_per_node=2 {script}', check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "iter 2: steps skipped for a non-finite loss or gradient: 1 in a row, 1 in all" in p.stdout
    assert "iter 5: steps skipped for a non-finite loss or gradient: 2 in a row, 3 in all" in p.stdout
    weights = checkpoint.load(checkpoint.latest(tmp_path), 'cpu')['model'].values()
    assert torch.isfinite(torch.stack([w.float().sum() for w in weights])).all()


def test_nonfinite_steps_in_a_row_stop_the_run_and_keep_the_last_good_checkpoint(data_root, tmp_path):
    args = [*BASE, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--max_iters=30',
            '--skip_nonfinite=2']
    p = train_with_faults(args, bad_loss=range(13, 31))
    user_error(p, 'iter 14: 3 step(s) in a row with a non-finite loss or gradient (skip_nonfinite=2): stopped',
               'the last good checkpoint is')
    assert torch.load(tmp_path / 'ckpt.pt', weights_only=True)['iter_num'] == 10
    p = train_with_faults([*args, '--skip_nonfinite=0', f'--out_dir={tmp_path}/first'], bad_loss=[2])
    user_error(p, 'iter 1: 1 step(s) in a row')


def test_fp16_overflow_is_the_scalers_to_skip(data_root, tmp_path):
    args = [*BASE, f'--dataset={data_root}/shakespeare_char', '--max_iters=5', '--dtype=float16']
    scale = {}
    for overflow in ([], [3]):
        p = train_with_faults([*args, f'--out_dir={tmp_path}/{len(overflow)}'], bad_grad=overflow, grad='inf')
        assert p.returncode == 0 and 'non-finite' not in p.stdout, p.stdout + p.stderr
        scale[len(overflow)] = torch.load(tmp_path / str(len(overflow)) / 'ckpt.pt',
                                          weights_only=True)['scaler']['scale']
    assert scale[1] == scale[0] / 2  # the scaler skipped that step and halved its scale


# -- bad data ------------------------------------------------------------------------------

def bad_dataset(data_root, tmp_path, train=None, val=None, meta=None):
    """A copy of the char dataset with some of its files replaced."""
    d = tmp_path / 'bad' / 'shakespeare_char'
    d.mkdir(parents=True)
    src = data_root / 'shakespeare_char'
    for name, new in (('train.bin', train), ('val.bin', val), ('meta.json', meta)):
        (d / name).write_bytes(src.joinpath(name).read_bytes() if new is None else new)
    return tmp_path / 'bad'


@pytest.mark.parametrize("case, phrases", [
    ('odd_length', ('train.bin has 1001 bytes, not a whole number of uint16 tokens',
                    'rerun python data/shakespeare_char/prepare.py')),
    ('id_outside_vocab', ('train.bin holds token id {V} at position 7, outside the vocabulary of {V}', 'meta.json')),
    ('empty_split', ('val.bin has 0 tokens, too few for one sequence of block_size=64', 'smaller block_size')),
    ('short_split', ('val.bin has 64 tokens, too few for one sequence of block_size=64',)),
    ('meta_too_small', ('train.bin holds token id', 'outside the vocabulary of 10 (from', 'do not match')),
    ('meta_not_json', ('meta.json is not a readable vocabulary', 'prepare.py')),
])
def test_bad_data_is_refused_at_start_up(data_root, tmp_path, case, phrases):
    ids = np.fromfile(data_root / 'shakespeare_char' / 'train.bin', dtype=np.uint16)[:1000]
    V = read_meta(data_root / 'shakespeare_char')['vocab_size']
    files = {
        'odd_length': dict(train=b'\0' * 1001),
        'id_outside_vocab': dict(train=np.where(np.arange(1000) == 7, V, ids).astype(np.uint16).tobytes()),
        'empty_split': dict(val=b''),
        'short_split': dict(val=ids[:64].tobytes()),
        'meta_too_small': dict(meta=json.dumps({'chars': list('abcdefghij')}).encode()),
        'meta_not_json': dict(meta=b'{"chars": ['),
    }[case]
    root = bad_dataset(data_root, tmp_path, **files)
    user_error(run('train.py', *BASE, f'--dataset={root}/shakespeare_char', f'--out_dir={tmp_path}', '--max_iters=1',
                   check=False),
               *(phrase.format(V=V) for phrase in phrases))


# -- kernel faults ----------------------------------------------------------------------------

@pytest.mark.skipif(not torch.cuda.is_available(), reason="kernels='auto' measures (and so tries) the kernels on CUDA")
@pytest.mark.parametrize("kernels", ['auto', 'triton'])
def test_a_failing_triton_kernel_falls_back_in_auto_and_fails_in_triton(data_root, tmp_path, kernels):
    script = f"""
import sys, runpy
sys.path.insert(0, {ROOT!r})
import triton, kernels.norm as norm
def fail(*args, **kwargs):
    raise triton.runtime.errors.OutOfResources(300000, 232448, 'shared memory')
norm._norm_fwd_kernel.run = fail  # as a kernel that cannot launch on this GPU
sys.argv = ['train.py', *{[*BASE, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--max_iters=3',
                           '--device=cuda', f'--kernels={kernels}', '--dropout=0.0']!r}]
runpy.run_path('train.py', run_name='__main__')
"""
    p = run('-c', script, env={'KERNELS_CACHE': ''}, check=False)  # measured afresh, not read from a cache
    if kernels == 'auto':
        assert p.returncode == 0, p.stdout + p.stderr
        assert "WARNING: layer_norm: torch" in p.stdout and "Triton failed: OutOfResources" in p.stdout, p.stdout
        assert "layer_norm=torch" in p.stdout and "iter 3:" in p.stdout
    else:
        assert p.returncode != 0 and 'OutOfResources' in p.stderr, p.stdout + p.stderr


# -- DDP faults ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fault, parallelism", [('dies', 'ddp'), ('hangs', 'ddp'), ('dies', 'fsdp')])
def test_a_dead_or_hung_rank_ends_the_others_with_a_message(data_root, tmp_path, fault, parallelism):
    p = start(f'{TORCHRUN} train.py', tmp_path, *BASE, f'--dataset={data_root}/shakespeare_char', '--max_iters=100000',
              '--gradient_accumulation_steps=2', '--ddp_timeout=10', f'--parallelism={parallelism}')
    wait_for(tmp_path, 'iter 3:', p)
    rank1 = ranks_of(p.pid)[1]
    os.kill(rank1, signal.SIGKILL if fault == 'dies' else signal.SIGSTOP)
    t0 = time.time()
    try:
        log = wait_for(tmp_path, 'error: rank 0 at iter', p, timeout=60)
    finally:
        if fault == 'hangs':
            os.kill(rank1, signal.SIGKILL)
    assert 'a collective with the other ranks failed: another rank died, hung or was stopped' in log
    assert time.time() - t0 < (10 if fault == 'dies' else 30)  # 'hangs': ddp_timeout, then the message
    rc, log = finish(p, tmp_path, timeout=60)
    assert rc != 0
