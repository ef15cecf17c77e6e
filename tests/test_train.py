"""End to end through the scripts, as a user runs them: prepare Shakespeare, train a tiny
model (loss falls, a checkpoint is written), resume it at the right iteration, sample
from it, DDP on two CPU processes (gloo), offline wandb, and one-line user errors."""
import os
import re
import sys
import glob
import json
import time
import signal
import tempfile
import functools
import threading
import statistics
import subprocess

import numpy as np
import pytest
import torch

import checkpoint
from conftest import SHAKESPEARE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ['config/train_shakespeare_char.py', '--compile=False', '--n_layer=2', '--n_head=2', '--n_embd=64',
        '--block_size=64', '--batch_size=8', '--eval_iters=5', '--log_interval=10', '--dropout=0.0',
        '--warmup_iters=10', '--always_save_checkpoint=True']

def script_env(extra=None):
    """The environment the scripts run in here: without the Triton interpreter, so a CPU run
    takes the PyTorch path (the interpreter is far too slow for training loops), and one CPU thread
    a process: the tests run several scripts at once on few cores, where a BLAS that sizes its
    threads by the load sums in another order from run to run (bitwise resume needs the same order)."""
    env = {k: v for k, v in os.environ.items() if k != 'TRITON_INTERPRET'}
    return {'OMP_NUM_THREADS': '1'} | env | (extra or {})

@functools.cache
def script_server(extra=()):
    """tests/script_server.py, one a test process and environment: started in script_env() with the extra variables
    (a tuple of pairs) that its children run with, so that the imports they inherit were made in their environment."""
    return subprocess.Popen([sys.executable, os.path.join(ROOT, 'tests', 'script_server.py')], cwd=ROOT,
                            env=script_env(dict(extra)), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

def request(argv, extra, **fields):
    """Ask the server for script_env(extra) to fork argv (the request's other fields: out, err, and cwd or status
    where given); returns the server, to read its answer from."""
    server = script_server(tuple(sorted(extra.items())))
    server.stdin.write(json.dumps({'argv': argv, 'env': script_env(extra), 'cwd': str(ROOT)} | fields) + '\n')
    server.stdin.flush()
    return server

def forked(argv, extra, cwd, timeout):
    """subprocess.run(['python', *argv], env=script_env(extra), cwd=cwd, capture_output=True, text=True) by
    tests/script_server.py's fork."""
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, 'out'), os.path.join(tmp, 'err')
        server = request(argv, extra, cwd=str(cwd), out=out, err=err)
        pid, timed_out = json.loads(server.stdout.readline())['pid'], []
        timer = threading.Timer(timeout, lambda: timed_out.append(os.kill(pid, signal.SIGKILL)))
        timer.start()
        returncode = json.loads(server.stdout.readline())['returncode']
        timer.cancel()
        with open(out) as stdout, open(err) as stderr:
            p = subprocess.CompletedProcess(argv, returncode, stdout.read(), stderr.read())
    if timed_out:  # not a script that killed itself
        raise subprocess.TimeoutExpired(argv, timeout, p.stdout, p.stderr)
    return p

def run(script, *args, env=None, cwd=ROOT, check=True, timeout=600):
    """Run a repo script (or `python -c code`: run('-c', code); `python -m module`: run('-m module ...'), torchrun)
    as script_env(env) sets it up, forked from tests/script_server.py."""
    argv = [*script.split(), *args]
    p = forked(argv, env or {}, cwd, timeout)
    if check:
        assert p.returncode == 0, f"{script} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p

class Background:
    """A script forked from tests/script_server.py in the background, as Popen(start_new_session=True) starts it:
    pid, poll(), wait(), send_signal(), kill(); its returncode is the status file that the server writes at its end."""

    def __init__(self, pid, status):
        self.pid, self.status, self.returncode = pid, status, None

    def poll(self):
        if self.returncode is None and os.path.exists(self.status):
            with open(self.status) as f:
                self.returncode = int(f.read())
        return self.returncode

    def wait(self, timeout=None):
        t0 = time.time()
        while self.poll() is None:
            if timeout is not None and time.time() - t0 > timeout:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.05)
        return self.returncode

    def send_signal(self, sig):
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self):
        self.send_signal(signal.SIGKILL)

def background(script, *args, log, env=None):
    """Start a repo script as run() runs it, in the background, its stdout and stderr going to the file log, its
    returncode to log + '.returncode' (a last run's removed first). Returns its Background."""
    status = f'{log}.returncode'
    if os.path.exists(status):
        os.remove(status)
    open(log, 'w').close()  # there from the start, as Popen's stdout file is
    server = request([*script.split(), *args], env or {}, out=str(log), err=str(log), status=status)
    return Background(json.loads(server.stdout.readline())['pid'], status)

def iter_losses(stdout):
    return {int(i): float(l) for i, l in re.findall(r"^iter (\d+): loss ([\d.]+)", stdout, re.M)}

def iter_times(stdout):
    """{iter: ms per iteration as logged}"""
    return {int(i): float(t) for i, t in re.findall(r"^iter (\d+): loss [\d.]+, time ([\d.]+)ms", stdout, re.M)}

# The tests that share a module fixture are marked as a group: .ci/run's workers (--dist loadgroup) take the tests one
# at a time, a group as one, so that the fixture is made once (and the tests that resume its run run in order).
@pytest.fixture(scope='module')
def trained(data_root, tmp_path_factory, device):
    out_dir = tmp_path_factory.mktemp('out')
    p = run('train.py', *TINY, f'--dataset={data_root}/shakespeare_char', f'--out_dir={out_dir}', f'--device={device}',
            '--max_iters=60', '--lr_decay_iters=80', '--eval_interval=30')
    return out_dir, p.stdout

@pytest.mark.xdist_group('trained')
def test_training_loss_falls_and_checkpoints(trained, device):
    out_dir, stdout = trained
    if device == 'cpu':  # the char config's CUDA graph gives way on a CPU, in one line
        assert "cuda_graph: off, it needs CUDA" in stdout
    losses = iter_losses(stdout)
    assert sorted(losses) == list(range(0, 61, 10)), stdout
    assert losses[0] > 4.0 and losses[60] < losses[0] - 0.8, losses  # from ln(65) = 4.17 towards the unigram entropy
    assert re.search(r"iter 60: .*ms, [\d,]+ tok/s, mfu (n/a|[\d.]+%), mem [\d,]+ MiB", stdout)
    assert os.path.exists(os.path.join(out_dir, 'ckpt.pt'))
    assert re.search(r"^memory per rank, estimated in GiB at 1/2/4/8 ranks: ddp [\d./]+, fsdp [\d./]+", stdout, re.M)

@pytest.mark.xdist_group('trained')
def test_resume_continues_at_the_saved_iteration(trained, data_root, device):
    out_dir, stdout = trained
    args = [a for a in TINY if a != '--block_size=64']  # the config file's 256: the checkpoint's 64 rules
    p = run('train.py', *args, f'--dataset={data_root}/shakespeare_char', f'--out_dir={out_dir}', f'--device={device}',
            '--max_iters=80', '--lr_decay_iters=80', '--eval_interval=30', '--init_from=resume',
            '--autocast_residual=True', '--weight_decay=0.05')  # (in fp32 the same math; another key is said)
    assert "resumed at iter 61" in p.stdout  # the run's last state, saved as it ended
    assert ("note: this run's settings differ from the run it resumes, and hold (autocast_residual=False before, "
            "weight_decay=0.1 before)") in p.stdout, p.stdout
    assert "tokens per iteration: 512 (1 rank(s) x 1 micro-steps x 8 x 64)" in p.stdout, p.stdout
    losses = iter_losses(p.stdout)
    assert sorted(losses) == [70, 80], p.stdout
    assert losses[70] < iter_losses(stdout)[0] - 0.8  # the trained weights, not a fresh model
    written = os.path.getmtime(os.path.join(out_dir, 'ckpt.pt'))
    p = run('train.py', *args, f'--dataset={data_root}/shakespeare_char', f'--out_dir={out_dir}', f'--device={device}',
            '--max_iters=80', '--lr_decay_iters=80', '--eval_interval=30', '--init_from=resume', '--log_interval=1')
    assert "resumed at iter 81" in p.stdout and not iter_losses(p.stdout), p.stdout  # finished: no step more
    assert os.path.getmtime(os.path.join(out_dir, 'ckpt.pt')) == written  # and nothing new to save

@pytest.mark.xdist_group('trained')
def test_sample_from_checkpoint(trained, tmp_path):
    out_dir, _ = trained
    p = run('sample.py', f'--out_dir={out_dir}', '--device=cpu', '--num_samples=2', '--max_new_tokens=40',
            '--start=ROMEO:')
    samples = p.stdout.split('---------------')
    assert len(samples) == 3 and all('ROMEO:' in s for s in samples[:2]), p.stdout
    prompt = tmp_path / 'prompt.txt'
    prompt.write_text('JULIET:\n')
    p = run('sample.py', f'--out_dir={out_dir}', '--device=cpu', '--num_samples=1', '--max_new_tokens=20',
            f'--start=FILE:{prompt}', '--top_k=None')  # top_k takes None: no cut
    assert 'JULIET:' in p.stdout

def test_nanogpts_cpu_command_runs_as_it_is(data_root, tmp_path):
    """nanoGPT's README command for a CPU, unchanged but for the folders and fewer iterations appended: the
    char config's CUDA graph gives way in one line, and every key keeps its meaning."""
    nanogpt = ['config/train_shakespeare_char.py', '--device=cpu', '--compile=False', '--eval_iters=20',
               '--log_interval=1', '--block_size=64', '--batch_size=12', '--n_layer=4', '--n_head=4', '--n_embd=128',
               '--max_iters=2000', '--lr_decay_iters=2000', '--dropout=0.0']
    p = run('train.py', *nanogpt, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}',
            '--max_iters=2', '--eval_iters=1')
    assert "cuda_graph: off, it needs CUDA" in p.stdout and "iter 2: loss" in p.stdout, p.stdout
    assert "--backend = 'nccl'" in run('train.py', '--help').stdout  # nanoGPT's DDP backend key

def test_gpt2_bpe_dataset_train_and_sample(tmp_path):
    text = tmp_path / 'input.txt'
    with open(SHAKESPEARE, encoding='utf-8') as f:
        text.write_text(f.read()[:30_000], encoding='utf-8')
    run('data/shakespeare/prepare.py', str(text), f'--out_dir={tmp_path}/data/shakespeare')
    p = run('train.py', *TINY, f'--dataset={tmp_path}/data/shakespeare', f'--out_dir={tmp_path}/out',
            '--device=cpu', '--max_iters=2', '--eval_interval=2')
    assert "number of parameters" in p.stdout and "vocab_size" not in p.stdout  # no meta.json: GPT-2's 50304
    p = run('sample.py', f'--out_dir={tmp_path}/out', '--device=cpu', '--num_samples=1', '--max_new_tokens=10',
            '--start=ROMEO:')
    assert "the tokenizer: GPT-2 BPE\n" in p.stdout and "ROMEO:" in p.stdout

def cpu_takes_rowwise_fp8():
    """Whether this torch's CPU torch._scaled_mm takes row-wise scales (2.13's does, 2.11's only one a tensor)."""
    a = torch.zeros(16, 16, dtype=torch.float8_e4m3fn)
    try:
        torch._scaled_mm(a, a.t(), scale_a=torch.ones(16, 1), scale_b=torch.ones(1, 16), out_dtype=torch.bfloat16)
    except RuntimeError:
        return False
    return True

def test_autocast_residual_and_fp8_reach_the_model(data_root, tmp_path):
    """train.py hands autocast_residual and fp8 to the model (whose tests check the stream and the products), and a
    bf16 run with both trains: Triton's AdamW ('auto' under the interpreter, no measurement) keeps the copies that
    the fp8 products read. Where this torch's CPU product takes no row-wise scales, fp8 is refused in one line."""
    p = run('train.py', *TINY, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--device=cpu',
            '--dtype=bfloat16', '--autocast_residual=True', '--fp8=True', '--max_iters=10', '--eval_interval=10',
            '--kernels=auto', '--use_triton_cross_entropy=False', env={'TRITON_INTERPRET': '1'}, check=False)
    assert "the residual stream in autocast's dtype" in p.stdout, p.stdout + p.stderr
    if not cpu_takes_rowwise_fp8():
        user_error(p, "fp8=True: this device's torch._scaled_mm takes no row-wise scales in torch.bfloat16")
        return
    assert p.returncode == 0, p.stderr[-3000:]
    assert "AdamW keeps 8 block matrices' copies in torch.bfloat16 for their products, which run in fp8" in p.stdout
    losses = iter_losses(p.stdout)
    assert losses[10] < losses[0], losses

def test_the_logged_time_leaves_out_the_eval(data_root, tmp_path, device):
    """The time logged at an eval's iteration is the steps' alone. The clock train.py reads jumps 1000 s in each
    eval (at model.eval()): counted in, the eval would add 100 s to the mean of the 10 iterations logged with it.
    A jump, not a slow eval, so that no load on the machine can pass for one (a real eval of 2 x 100 batches
    once did: it took as long as the 10 steps of a loaded CI machine)."""
    jumping_clock = ("import runpy, time, torch\n"
                     "real_time, jumped = time.time, [0.0]\n"
                     "time.time = lambda: real_time() + jumped[0]\n"
                     "module_eval = torch.nn.Module.eval\n"
                     "def eval_and_jump(self):\n"
                     "    jumped[0] += 1000.0\n"
                     "    return module_eval(self)\n"
                     "torch.nn.Module.eval = eval_and_jump\n"
                     "runpy.run_path('train.py', run_name='__main__')\n")
    p = run('-c', jumping_clock, *TINY, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}',
            f'--device={device}', '--max_iters=20', '--eval_interval=10')
    assert p.stdout.count('val loss') == 3, p.stdout  # evals at 0, 10 and 20, each in the window logged with it
    times = iter_times(p.stdout)
    assert sorted(times) == [0, 10, 20] and max(times.values()) < 50_000, times

@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_the_logged_time_is_the_steps_while_the_host_runs_ahead(data_root, tmp_path):
    """Replayed from a CUDA graph (one launch a step), the host queues steps far ahead of the GPU between logs:
    the time logged every 10 iterations is the mean since the last log, as a log (and a host sync) every
    iteration measures it. The model is the char config's, large enough for its GPU time to exceed the host's."""
    times = {}
    for every in (1, 10):
        p = run('train.py', 'config/train_shakespeare_char.py', f'--dataset={data_root}/shakespeare_char',
                f'--out_dir={tmp_path}/{every}', '--device=cuda', '--compile=False', '--kernels=torch',
                '--cuda_graph=True', '--max_iters=40', '--eval_interval=1000', '--eval_iters=2',
                f'--log_interval={every}')
        times[every] = statistics.median(t for i, t in iter_times(p.stdout).items() if i >= 20)
    assert 0.5 < times[10] / times[1] < 2, times

@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
@pytest.mark.parametrize("compile", [False, True])
def test_a_step_replayed_from_one_cuda_graph_trains_and_resumes_as_the_plain_one(data_root, tmp_path, compile):
    """cuda_graph=True (the whole step, Triton kernels in it, replayed from one graph after 3
    plain steps) follows the plain run's losses through the learning rate's warm-up, which the
    graph reads from tensors, and through a resume from its checkpoint."""
    base = [*TINY, f'--dataset={data_root}/shakespeare_char', '--device=cuda', f'--compile={compile}',
            '--kernels=triton', '--log_interval=1', '--eval_interval=20']
    plain = iter_losses(run('train.py', *base, f'--out_dir={tmp_path}/plain', '--max_iters=40').stdout)
    first = run('train.py', *base, f'--out_dir={tmp_path}/graph', '--max_iters=20', '--cuda_graph=True').stdout
    assert "cuda_graph: 18 steps replayed from one CUDA graph, after 3 plain" in first, first
    second = run('train.py', *base, f'--out_dir={tmp_path}/graph', '--max_iters=40', '--cuda_graph=True',
                 '--init_from=resume').stdout
    assert "resumed at iter 21" in second and "cuda_graph: 17 steps replayed" in second, second
    graphed = iter_losses(first) | iter_losses(second)
    assert sorted(graphed) == sorted(plain) == list(range(41))
    for i, loss in plain.items():  # not bitwise: the embedding's backward adds with atomics
        assert abs(graphed[i] - loss) < 0.02, (i, graphed[i], loss)

@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
@pytest.mark.parametrize("compile", [False, True])
def test_a_ddp_step_replayed_from_one_cuda_graph_trains_as_the_plain_one(data_root, tmp_path, compile):
    """cuda_graph=True under torchrun (a rank per GPU, up to two), two micro-steps per rank: the
    graph, recorded after 11 plain steps, holds the all-reduces and follows the plain DDP run; the
    run exits (at 2 ranks, with the graph still alive, destroy_process_group hung: pytorch#115388)."""
    world = min(torch.cuda.device_count(), 2)
    base = ['-m torch.distributed.run --standalone', f'--nproc_per_node={world}', 'train.py', *TINY,
            f'--dataset={data_root}/shakespeare_char', '--device=cuda', f'--compile={compile}',
            '--kernels=triton', '--log_interval=1', '--eval_interval=20', '--max_iters=20',
            f'--gradient_accumulation_steps={2 * world}']
    plain = run(' '.join(base), f'--out_dir={tmp_path}/plain').stdout
    graphed = run(' '.join(base), f'--out_dir={tmp_path}/graph', '--cuda_graph=True').stdout
    assert "cuda_graph: 10 steps replayed from one CUDA graph, after 11 plain" in graphed, graphed
    assert f"ddp: weights identical on all {world} ranks" in graphed, graphed
    plain, graphed = iter_losses(plain), iter_losses(graphed)
    assert sorted(graphed) == sorted(plain) == list(range(21))
    for i, loss in plain.items():  # not bitwise: the embedding's backward adds with atomics
        assert abs(graphed[i] - loss) < 0.02, (i, graphed[i], loss)

@pytest.mark.skipif(not torch.cuda.is_available(), reason="the refusal comes after the CUDA check")
def test_a_graphed_step_refuses_recompute_with_dropout(data_root, tmp_path):
    p = run('train.py', *TINY, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--device=cuda',
            '--max_iters=1', '--cuda_graph=True', '--recompute=mlp', '--dropout=0.1', check=False)
    user_error(p, 'cuda_graph=True: not with recompute and dropout')

def test_ddp_two_cpu_ranks_end_with_identical_weights(data_root, tmp_path):
    p = run('-m torch.distributed.run --standalone --nproc_per_node=2 train.py', *TINY,
            f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--device=cpu', '--max_iters=10',
            '--eval_interval=10', '--gradient_accumulation_steps=2')
    assert "ddp: weights identical on all 2 ranks" in p.stdout, p.stdout + p.stderr
    assert "tokens per iteration: 1,024 (2 rank(s) x 1 micro-steps x 8 x 64)" in p.stdout

TORCHRUN = '-m torch.distributed.run --standalone --nproc_per_node=2 train.py'

def fsdp_args(data_root, arch='gpt2'):
    """fp32, no dropout, 4 micro-steps a step in all (2 a rank under 2 ranks): the same global batches whatever the
    number of ranks, and losses logged to 6 decimals every step."""
    return [*TINY, f'--dataset={data_root}/shakespeare_char', '--device=cpu', '--eval_interval=100', '--eval_iters=2',
            '--log_interval=1', '--gradient_accumulation_steps=4', '--dtype=float32', '--dropout=0.0', f'--arch={arch}']

def assert_close_losses(got, want, iters):
    assert all(abs(got[i] - want[i]) <= 1e-6 * abs(want[i]) for i in iters), (got, want)

@pytest.fixture(scope='module', params=['gpt2', 'llama'])
def three_ways(request, data_root, tmp_path_factory):
    """14 steps of one process, of two DDP ranks and of two FSDP ranks: {way: (out_dir, losses)}."""
    runs = {}
    for way in ('one', 'ddp', 'fsdp'):
        out_dir = tmp_path_factory.mktemp(way)
        script = 'train.py' if way == 'one' else TORCHRUN
        p = run(script, *fsdp_args(data_root, request.param), f'--out_dir={out_dir}', '--max_iters=14',
                *([f'--parallelism={way}'] if way != 'one' else []))
        runs[way] = out_dir, iter_losses(p.stdout)
    return request.param, runs

@pytest.mark.xdist_group('three_ways')
def test_fsdp_takes_the_steps_of_ddp_and_of_one_process(three_ways):
    """FSDP over two CPU ranks (gloo) against DDP and one process, fp32, the same global batches: the losses within
    1e-6 relative at every step, and the weights at the end but for fp32 rounding (the gradients summed in other
    orders), FSDP's read whole from its sharded checkpoint."""
    arch, runs = three_ways
    losses = {way: losses for way, (_, losses) in runs.items()}
    assert sorted(losses['fsdp']) == list(range(15))
    assert_close_losses(losses['fsdp'], losses['one'], range(15))
    assert_close_losses(losses['ddp'], losses['one'], range(15))
    sharded = checkpoint.latest(runs['fsdp'][0])
    assert os.path.basename(sharded) == 'iter_00000015' and not os.path.exists(runs['fsdp'][0] / 'ckpt.pt')
    weights = {way: checkpoint.load(checkpoint.latest(runs[way][0]), 'cpu')['model'] for way in runs}
    assert weights['fsdp'].keys() == weights['one'].keys() == weights['ddp'].keys()
    for name, w in weights['one'].items():
        for way in ('ddp', 'fsdp'):
            torch.testing.assert_close(weights[way][name], w, rtol=1e-5, atol=1e-6, msg=f"{way} {name}")

@pytest.mark.xdist_group('three_ways')
@pytest.mark.parametrize('three_ways', ['gpt2'], indirect=True)
def test_fsdp_resumes_exactly_and_at_other_world_sizes(three_ways, data_root, tmp_path):
    """Two FSDP ranks stopped after step 4 and resumed: the uninterrupted run's losses to the bit. Then one process
    resumes from the sharded checkpoint (2 -> 1), and two FSDP ranks from its ckpt.pt (1 -> 2): each step's loss the
    uninterrupted runs' within 1e-6 (the same weights, AdamW state and batches). sample.py and export.py read the
    sharded one, and export.py writes it whole, which resumes."""
    _, runs = three_ways
    args = [*fsdp_args(data_root), f'--out_dir={tmp_path}']
    run(TORCHRUN, *args, '--parallelism=fsdp', '--max_iters=4')
    p = run(TORCHRUN, *args, '--parallelism=fsdp', '--max_iters=10', '--init_from=resume')
    assert f"resuming from {tmp_path / 'ckpt_sharded' / 'iter_00000005'}" in p.stdout, p.stdout
    assert iter_losses(p.stdout) == {i: runs['fsdp'][1][i] for i in range(5, 11)}
    p = run('train.py', *args, '--max_iters=12', '--init_from=resume')  # 2 -> 1
    assert "resumed at iter 11" in p.stdout and sorted(iter_losses(p.stdout)) == [11, 12], p.stdout
    assert_close_losses(iter_losses(p.stdout), runs['one'][1], [11, 12])
    p = run(TORCHRUN, *args, '--parallelism=fsdp', '--max_iters=14', '--init_from=resume')  # 1 -> 2
    assert f"resuming from {tmp_path / 'ckpt.pt'}" in p.stdout and "resumed at iter 13" in p.stdout, p.stdout
    assert_close_losses(iter_losses(p.stdout), runs['fsdp'][1], [13, 14])
    p = run('sample.py', f'--out_dir={tmp_path}', '--device=cpu', '--num_samples=1', '--max_new_tokens=10')
    assert p.stdout.count('---------------') == 1, p.stdout
    run('export.py', f'--out_dir={tmp_path}', f'--hf_dir={tmp_path / "hf"}', f'--whole_ckpt={tmp_path / "one.pt"}')
    from safetensors.torch import load_file
    last = checkpoint.load(checkpoint.latest(tmp_path), 'cpu')['model']
    assert torch.equal(load_file(tmp_path / 'hf' / 'model.safetensors')['transformer.wte.weight'],
                       last['transformer.wte.weight'])
    whole = torch.load(tmp_path / 'one.pt', weights_only=True)  # the sharded checkpoint as one file: it resumes
    assert whole['iter_num'] == 15 and all(torch.equal(whole['model'][k], w) for k, w in last.items())
    (tmp_path / 'whole').mkdir()
    (tmp_path / 'one.pt').rename(tmp_path / 'whole' / 'ckpt.pt')
    p = run('train.py', *fsdp_args(data_root), f'--out_dir={tmp_path / "whole"}', '--init_from=resume', '--max_iters=15')
    assert "resumed at iter 15" in p.stdout and 15 in iter_losses(p.stdout), p.stdout

def test_what_fsdp_does_not_take_is_a_one_line_error(data_root, tmp_path):
    p = run(TORCHRUN, *fsdp_args(data_root), f'--out_dir={tmp_path}', '--parallelism=fsdp', '--optimizer=muon',
            check=False)
    assert p.returncode != 0 and "error: parallelism='fsdp' does not take optimizer='muon': use 'ddp'" in p.stderr, \
        p.stderr
    user_error(run('train.py', *fsdp_args(data_root), f'--out_dir={tmp_path}', '--parallelism=zero', check=False),
               "parallelism must be 'ddp' or 'fsdp'")

@pytest.mark.skipif(tuple(map(int, np.__version__.split('.')[:2])) >= (2, 4),
                    reason="Triton 3.6's CPU interpreter needs NumPy < 2.4 (requirements.txt)")
def test_ddp_ranks_read_the_same_matmul_copies(data_root, tmp_path):
    """bf16 with Triton's AdamW (so it keeps the block matrices' copies; 'auto' with the interpreter and no
    measurement, the loss left to PyTorch: the optimizer is the only Triton op): the ranks seed their initial weights
    differently and DDP broadcasts rank 0's, after configure_optimizers made each rank's copies; train.py makes them
    again from the broadcast weights and checks they agree, or each rank's first forward would read its own."""
    p = run('-m torch.distributed.run --standalone --nproc_per_node=2 train.py', *TINY,
            f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--device=cpu', '--max_iters=2',
            '--eval_interval=2', '--eval_iters=1', '--gradient_accumulation_steps=2', '--dtype=bfloat16',
            '--kernels=auto', '--use_triton_cross_entropy=False', env={'TRITON_INTERPRET': '1'})
    assert "optimizer=triton" in p.stdout, p.stdout + p.stderr
    assert "AdamW keeps 8 block matrices' copies in torch.bfloat16" in p.stdout, p.stdout + p.stderr
    assert "ddp: the block matrices' copies identical on all 2 ranks" in p.stdout
    assert "ddp: weights identical on all 2 ranks" in p.stdout

def test_muon_trains_resumes_and_shards_under_ddp(data_root, tmp_path):
    """optimizer='muon': the loss falls as with AdamW, a checkpoint resumes (Muon's momentum
    with it), resuming with the other optimizer is a one-line error, and two DDP ranks,
    each orthogonalising half of the matrices, end with identical weights."""
    base = [*TINY, f'--dataset={data_root}/shakespeare_char', '--device=cpu', '--optimizer=muon', '--eval_interval=30']
    p = run('train.py', *base, f'--out_dir={tmp_path}', '--max_iters=30', '--lr_decay_iters=40')
    losses = iter_losses(p.stdout)
    assert "Muon lr 0.02 wd 0: 8 tensors" in p.stdout and losses[30] < losses[0] - 0.8, p.stdout
    p = run('train.py', *base, f'--out_dir={tmp_path}', '--max_iters=40', '--lr_decay_iters=40', '--init_from=resume')
    assert "resumed at iter 31" in p.stdout and iter_losses(p.stdout)[40] < losses[0] - 0.8, p.stdout
    user_error(run('train.py', *base, f'--out_dir={tmp_path}', '--init_from=resume', '--optimizer=adamw',
                   '--max_iters=40', check=False), "optimizer='muon'", "asks for 'adamw'")
    p = run('-m torch.distributed.run --standalone --nproc_per_node=2 train.py', *base, f'--out_dir={tmp_path}/ddp',
            '--max_iters=10', '--gradient_accumulation_steps=2')
    assert "ddp: weights identical on all 2 ranks" in p.stdout, p.stdout + p.stderr

def test_wandb_offline(data_root, tmp_path):
    pytest.importorskip('wandb', reason="requirements.txt's wandb is not installed here")
    p = run('train.py', *TINY, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--device=cpu',
            '--max_iters=10', '--eval_interval=10', '--wandb_log=True',
            env={'WANDB_MODE': 'offline', 'WANDB_DIR': str(tmp_path), 'WANDB_SILENT': 'true'})
    runs = glob.glob(str(tmp_path / 'wandb' / 'offline-run-*' / 'run-*.wandb'))
    assert len(runs) == 1 and os.path.getsize(runs[0]) > 0, p.stdout + p.stderr
    with open(runs[0], 'rb') as f:  # the run's records; the summary holds the kernel choices as JSON
        assert (b'{"layer_norm":"torch","gelu":"torch","attention":"torch","cross_entropy":"torch","optimizer":"torch"}'
                in f.read())

def user_error(p, *phrases):
    """A user error: non-zero exit, one line on stderr, no traceback."""
    assert p.returncode != 0 and 'Traceback' not in p.stderr, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('error: '), p.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]

def test_resume_takes_settings_the_model_reads_as_its_own(data_root, tmp_path):
    """A resume is not refused for settings the saved model reads the same: llama's bias (it has none), n_kv_head
    given where it was left out (None is n_head)."""
    base = [*TINY, f'--dataset={data_root}/shakespeare_char', f'--out_dir={tmp_path}', '--device=cpu',
            '--arch=llama', '--bias=True', '--eval_interval=2']
    run('train.py', *base, '--max_iters=2')
    p = run('train.py', *base, '--n_kv_head=2', '--init_from=resume', '--max_iters=4')
    assert "resumed at iter 3" in p.stdout and "(iter 4)" in p.stdout, p.stdout

@pytest.mark.xdist_group('trained')
def test_user_errors_are_one_line(trained, data_root, tmp_path, device):
    out_dir, _ = trained
    base = [*TINY, f'--dataset={data_root}/shakespeare_char', '--device=cpu', '--max_iters=1']
    user_error(run('train.py', *base, '--dataset=nope', f'--out_dir={tmp_path}', check=False),
               'nope/train.bin not found', 'python data/nope/prepare.py')
    user_error(run('train.py', *base, '--dataset=nope', '--init_from=gpt2', f'--out_dir={tmp_path}', check=False),
               'nope/train.bin not found')  # before the weights are read (or downloaded)
    user_error(run('train.py', *base, f'--dataset={tmp_path}/nope', f'--out_dir={tmp_path}', check=False),
               f'python data/<its kind>/prepare.py --out_dir={tmp_path}/nope')  # a path: its own folder
    user_error(run('train.py', *base, f'--out_dir={tmp_path}/empty', '--init_from=resume', check=False),
               'no checkpoint at', "init_from='scratch'")
    user_error(run('train.py', *base, f'--out_dir={out_dir}', '--init_from=resume', '--n_layer=3', check=False),
               'has n_layer=2 but this run asks for n_layer=3')
    user_error(run('train.py', *base, f'--out_dir={out_dir}', '--init_from=resume', '--block_size=128', check=False),
               'block_size=64', 'block_size=128')
    user_error(run('train.py', *base, f'--out_dir={out_dir}', '--init_from=resume', '--arch=llama', check=False),
               "arch='gpt2'", "arch='llama'")
    user_error(run('train.py', *base, f'--out_dir={out_dir}', '--init_from=resume', '--gelu_approximate=tanh',
                   check=False),
               "gelu_approximate='none' but this run asks for gelu_approximate='tanh'")
    refused = [  # (arguments, phrases of the one line), each refused before a step runs
        (['--gelu_approximate=erf'], ['gelu_approximate must be one of']),
        (['--kernels=fast'], ['kernels must be']),
        (['--cuda_graph=True'], ['cuda_graph=True: it needs CUDA']),
        (['--recompute=attention'], ["recompute must be one of ('none', 'activation', 'mlp')"]),
        (['--use_triton_mlp=True'], ['use_triton_mlp=True cannot run']),
        (['--use_triton_mlp=off'], ["use_triton_mlp='off': each override is True, False or None"]),
        (['--kernels=triton'], ["kernels='triton' cannot run"]),
        (['--fp8=True'], ["fp8=True: the fp8 products read the copies AdamW keeps, and this run keeps none"]),  # fp32
        (['--batch_size=0', '--grad_clip=-1'],  # a negative grad_clip would flip the gradients
         ["batch_size=0 must be at least 1; grad_clip=-1.0 must be at least 0"]),
        (['--arch=llama', '--n_kv_head=3'], ["n_kv_head a divisor of n_head"]),
        (['--n_kv_head=0'], ["each >= 1"]),  # None is n_head, 0 is no heads
        (['--device=gpu'], ["device must be"]),
        (['--batch_size=None'], ["--batch_size expects int, got None"]),  # None only where a key takes it
        (['--ddp_timeout=0'], ["ddp_timeout=0 must be at least 1"]),
        (['--out_dir='], ["out_dir='' names no folder"]),
        (['--device=cuda:99'], ["device=cuda:99 but this machine has"]),
    ]
    for args, phrases in refused:
        user_error(run('train.py', *base, f'--out_dir={tmp_path}', *args, check=False), *phrases)
    run('train.py', *base, f'--out_dir={tmp_path}/lr', '--warmup_iters=0', '--lr_decay_iters=0')  # no 0 / 0
    user_error(run('sample.py', f'--out_dir={tmp_path}/empty', check=False), 'no checkpoint at')
    user_error(run('sample.py', f'--out_dir={out_dir}', '--start=FILE:nowhere.txt', check=False), 'no such file')
    user_error(run('sample.py', f'--out_dir={out_dir}', '--top_k=0', check=False), 'top_k at least 1')
    user_error(run('sample.py', f'--out_dir={out_dir}', '--device=cuda:99', check=False), 'this machine has')
    user_error(run('sample.py', f'--out_dir={out_dir}', '--start=\u263a', '--device=cpu', check=False), 'vocabulary')
