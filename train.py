"""
Train a GPT on one device or several.

One device (GPU, or CPU for small runs):
$ python train.py config/train_shakespeare_char.py --batch_size=32 --compile=False
Several GPUs of one node with DDP (gloo instead of NCCL when the devices are CPUs):
$ torchrun --standalone --nproc_per_node=4 train.py config/train_gpt2.py
Across nodes, on the first node (and --node_rank=1 on the second):
$ torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 --master_addr=10.0.0.1 --master_port=29500 train.py
"""
import os
import sys
import math
import time
import signal
import hashlib
import datetime
import resource
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import checkpoint
from kernels.adamw import kept_copies
from model import GPTConfig, GPT, OVERRIDES, compile_model, gpu_peak_flops, measure_kernels, loss_chunk_bytes, refresh_matmul_copies
from step_graph import StepGraph, set_lr
from configurator import configure
from data.common import read_meta, check_tokens

# -----------------------------------------------------------------------------
# default config values: GPT-2 (124M) on OpenWebText
# I/O
out_dir = 'out'
eval_interval = 2000
log_interval = 1
eval_iters = 200
eval_only = False  # evaluate once and exit
always_save_checkpoint = True  # else only when val loss improves (a stop by signal saves either way)
init_from = 'scratch'  # 'scratch' or 'resume' (from out_dir/ckpt.pt)
keep_checkpoints = 1  # > 1: the last K checkpoints also stay as out_dir/ckpt-<iter>.pt (hard links, no extra disk)
# wandb logging (WANDB_MODE=offline works without a network)
wandb_log = False
wandb_project = 'owt'
wandb_run_name = 'gpt2'
# data: train.bin / val.bin (and meta.json for char-level) in data_root/dataset
dataset = 'openwebtext'
data_root = 'data'
gradient_accumulation_steps = 5 * 8  # to emulate larger batches; split across DDP ranks
batch_size = 12  # micro-batch size
block_size = 1024
# model
arch = 'gpt2'  # 'gpt2' or 'llama'
n_layer = 12
n_head = 12
n_kv_head = None  # llama: key/value heads (grouped-query attention); None = n_head
n_embd = 768
dropout = 0.0
bias = False  # gpt2: biases in Linears and LayerNorms
rope_theta = 10000.0
gelu_approximate = 'none'  # gpt2's GELU: 'none' (erf) as nanoGPT, 'tanh' as GPT-2 (then in the matmuls' epilogues)
recompute = 'none'  # activations the backward recomputes instead of keeping: 'none', 'activation' (each norm's output, with the Triton norms, and each MLP's activation output), 'mlp' (each MLP's), 'block' (each block's)
autocast_residual = False  # the residual stream in autocast's dtype (bf16) instead of fp32: fewer bytes per norm, less memory
matmul_copies = True  # under autocast, AdamW keeps the block matrices' copies in its dtype for their products (model.py)
loss_chunk_mib = None  # the fused loss's chunk of logits, MiB: larger is faster; None: 400 or 4096 bf16 rows, whichever is more, without recompute; the op's default with it (model.py)
kernels = 'auto'  # 'auto' (Triton where it can run and was measured faster), 'triton' or 'torch'
# per-op overrides: True or False decides the op whatever `kernels` says, None follows it
use_triton_layer_norm = None
use_triton_rms_norm = None
use_triton_rotary = None
use_triton_mlp = None  # the MLP's GELU or SwiGLU
use_triton_attention = None
use_triton_cross_entropy = None
use_triton_newton_schulz = None  # Muon's kernels (optimizer='muon')
kernels_cache = 'kernels_cache.json'  # 'auto' on CUDA: the measured choices, reused at the next start; None: measure each time
# optimizer: 'adamw' for everything, or 'muon': Muon (muon.py) for the blocks' weight matrices,
# AdamW for the embeddings (= the LM head) and the gains and biases
optimizer = 'adamw'
learning_rate = 6e-4  # AdamW
max_iters = 600000
weight_decay = 1e-1  # AdamW, on matrices only
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0  # 0 disables clipping
skip_nonfinite = 10  # a step with a non-finite loss or gradient is skipped and counted; more than this many
# in a row (seen at a log step) stop the run, keeping the last good checkpoint (0: stop at the first)
muon_lr = 0.02
muon_momentum = 0.95  # Nesterov
muon_weight_decay = 0.0
embed_lr = None  # muon: AdamW's lr for the embeddings; None = learning_rate
scalar_lr = None  # muon: AdamW's lr for the gains and biases; None = learning_rate
# learning rate: linear warmup, then cosine decay to min_lr; every group's lr (Muon's too) follows
# the same curve, scaled by its own base lr over learning_rate
decay_lr = True
warmup_iters = 2000
lr_decay_iters = 600000  # ~ max_iters, per Chinchilla
min_lr = 6e-5  # ~ learning_rate / 10, per Chinchilla
# system
device = 'auto'  # 'auto', 'cpu', 'cuda', 'cuda:1', 'mps'
dtype = 'auto'  # 'auto' (bf16 where supported, else fp16 on CUDA, fp32 elsewhere), 'float32', 'bfloat16', 'float16'
compile = True  # torch.compile the model
compile_mode = 'default'  # torch.compile's mode; 'reduce-overhead': forward and backward replayed as CUDA graphs
cuda_graph = False  # the whole step (micro-steps, clipping, AdamW; DDP's all-reduces) replayed from one CUDA graph
# (step_graph.py): CUDA, AdamW, bf16 or fp32, compile_mode='default'
seed = 1337
ddp_timeout = 600  # DDP: seconds a rank waits for the others (a dead or hung rank ends the run); longer than rank 0's eval + save
# -----------------------------------------------------------------------------
config = configure(globals())
ARCH_KEYS = ('arch', 'n_layer', 'n_head', 'n_kv_head', 'n_embd', 'block_size', 'bias', 'vocab_size', 'rope_theta',
             'gelu_approximate')

def fail(message):
    """One line on stderr, a non-zero exit, no traceback: for what the user can fix."""
    sys.exit(f"error: {message}")

def rank_digests(tensors):
    """(this rank's sha256 of the tensors' values, every rank's): DDP's replicas checked once, cheaply."""
    digest = hashlib.sha256(b''.join(t.detach().float().cpu().numpy().tobytes() for t in tensors)).hexdigest()
    digests = [None] * ddp_world_size
    dist.all_gather_object(digests, digest)
    return digest, digests

# devices and DDP -------------------------------------------------------------
if device == 'auto':
    device = 'cuda' if torch.cuda.is_available() else 'mps' if torch.backends.mps.is_available() else 'cpu'
device_type = 'cuda' if 'cuda' in device else 'mps' if 'mps' in device else 'cpu'
if device_type == 'cuda' and not torch.cuda.is_available():
    fail(f"device={device} but CUDA is not available here; use --device=cpu")
ddp = int(os.environ.get('RANK', -1)) != -1  # launched by torchrun?
if ddp:
    dist.init_process_group(backend='nccl' if device_type == 'cuda' else 'gloo',
                            timeout=datetime.timedelta(seconds=ddp_timeout))
    # the stop flag and the generators' states go through the CPU (gloo) whatever the devices
    control_group = (dist.new_group(backend='gloo', timeout=datetime.timedelta(seconds=ddp_timeout))
                     if device_type == 'cuda' else None)
    ddp_rank, ddp_local_rank, ddp_world_size = int(os.environ['RANK']), int(os.environ['LOCAL_RANK']), int(os.environ['WORLD_SIZE'])
    if device_type == 'cuda':
        device = f'cuda:{ddp_local_rank}'
        torch.cuda.set_device(device)
    master_process = ddp_rank == 0  # logs, evaluates and checkpoints
    if gradient_accumulation_steps % ddp_world_size:
        fail(f"gradient_accumulation_steps={gradient_accumulation_steps} must be a multiple of the {ddp_world_size} DDP ranks")
    gradient_accumulation_steps //= ddp_world_size
else:
    ddp_rank, ddp_world_size, master_process = 0, 1, True
if compile and compile_mode == 'reduce-overhead' and gradient_accumulation_steps > 1:
    # the first micro-step's gradients would be a CUDA graph's outputs, which the next replay overwrites
    fail(f"compile_mode='reduce-overhead' (CUDA graphs) takes one micro-step per rank, this run has "
         f"{gradient_accumulation_steps}; use --compile_mode=default or --gradient_accumulation_steps={ddp_world_size}")
if not master_process:  # one copy of every log line
    sys.stdout = open(os.devnull, 'w')
tokens_per_iter = gradient_accumulation_steps * ddp_world_size * batch_size * block_size
print(f"tokens per iteration: {tokens_per_iter:,} ({ddp_world_size} rank(s) x {gradient_accumulation_steps} "
      f"micro-steps x {batch_size} x {block_size})")
if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(seed + ddp_rank)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

if dtype == 'auto':
    dtype = ('bfloat16' if torch.cuda.is_bf16_supported() else 'float16') if device_type == 'cuda' else 'float32'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}.get(dtype)
if ptdtype is None:
    fail(f"dtype must be 'auto', 'float32', 'bfloat16' or 'float16', got {dtype!r}")
ctx = nullcontext() if ptdtype == torch.float32 else torch.autocast(device_type=device_type, dtype=ptdtype)
if cuda_graph:  # what the recorded step cannot hold: another graph, a host sync
    why_not = ("it needs CUDA" if device_type != 'cuda' else
               "optimizer='muon' records CUDA graphs of its own" if optimizer != 'adamw' else
               "compile_mode='reduce-overhead' records CUDA graphs of its own" if compile and compile_mode == 'reduce-overhead'
               else "not with fp16 (its loss scaler is not written for replay)" if ptdtype == torch.float16
               else "not with recompute and dropout (the recomputation replays dropout's draws from a random state the host "
                    "reads when recording, which the replays would not advance)"
               if recompute != 'none' and dropout > 0 else None)
    if why_not:
        fail(f"cuda_graph=True: {why_not}")
gpu_name, peak_flops = gpu_peak_flops(device)
print(f"device {device} ({gpu_name}), dtype {dtype}, MFU against "
      + (f"{peak_flops / 1e12:.0f} TFLOP/s bf16 peak" if peak_flops else "no known peak"))

# data --------------------------------------------------------------------------
data_dir = os.path.join(data_root, dataset)
try:  # bad data is refused here, not met as a crash (or silent garbage) mid-run
    meta = read_meta(data_dir)
    vocab_size = meta['vocab_size'] if meta else 50304  # no vocabulary file: GPT-2 BPE, padded to a multiple of 64
    for split in ('train', 'val'):
        check_tokens(os.path.join(data_dir, f'{split}.bin'), vocab_size, block_size,
                     f"from {meta['path']}" if meta else "GPT-2's, as the dataset has no meta.json",
                     f"python data/{dataset}/prepare.py")
except ValueError as e:
    fail(e)
if meta:
    print(f"vocab_size = {vocab_size} (from {meta['path']})")

def get_batch(split, name):
    """The batch called `name` ('<iter> <micro-step>' in training, 'eval <k>') of a split. Its
    offsets depend on (seed, rank, split, name) alone, not on what ran before: a resumed run
    reads the batches the uninterrupted one would have, and every eval reads the same ones."""
    # a new memmap per batch: a long-lived one grows the process's memory (numpy keeps pages)
    data = np.memmap(os.path.join(data_dir, f'{split}.bin'), dtype=np.uint16, mode='r')
    key = hashlib.sha256(f"{seed} {ddp_rank} {split} {name}".encode()).digest()
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=torch.Generator().manual_seed(
        int.from_bytes(key[:8], 'little')))
    x = torch.stack([torch.from_numpy(data[i:i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block_size].astype(np.int64)) for i in ix])
    if device_type == 'cuda':  # pinned host memory lets the copy overlap with compute
        return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    return x.to(device), y.to(device)

# model -------------------------------------------------------------------------
iter_num = 0
best_val_loss = 1e9
model_args = dict(arch=arch, n_layer=n_layer, n_head=n_head, n_kv_head=n_kv_head, n_embd=n_embd, block_size=block_size,
                  bias=bias, vocab_size=vocab_size, dropout=dropout, rope_theta=rope_theta,
                  gelu_approximate=gelu_approximate)
try:  # the settings GPTConfig checks, refused in one line before anything is built
    gptconf = GPTConfig(**model_args)
except ValueError as e:
    fail(e)
ckpt_path = os.path.join(out_dir, 'ckpt.pt')
ckpt = None
if init_from == 'resume':
    print(f"resuming from {ckpt_path}")
    try:
        ckpt = checkpoint.load(ckpt_path, device)
    except ValueError as e:
        fail(e)
    saved = GPTConfig(**ckpt['model_args']).__dict__  # with the defaults of keys older checkpoints lack
    differ = [k for k in ARCH_KEYS if saved[k] != gptconf.__dict__[k]]
    if differ:
        fail(f"checkpoint {ckpt_path} has " + ", ".join(f"{k}={saved[k]!r}" for k in differ) + " but this run asks for "
             + ", ".join(f"{k}={model_args[k]!r}" for k in differ)
             + (f" (the vocabulary of {data_dir})" if 'vocab_size' in differ else "")
             + ": use the checkpoint's settings and data, or another out_dir")
elif init_from != 'scratch':
    fail(f"init_from must be 'scratch' or 'resume', got {init_from!r}")
overrides = {name: config[f'use_triton_{name}'] for name in OVERRIDES}
kernel_timings = None
try:  # on every rank, before kernels='auto' times the loss with it
    loss_chunk_bytes(recompute, vocab_size, loss_chunk_mib)
except ValueError as e:
    fail(e)
gpt_args = dict(recompute=recompute, autocast_residual=autocast_residual, loss_chunk_mib=loss_chunk_mib)  # GPT's arguments besides config and kernels
if kernels == 'auto' and device_type == 'cuda':  # measured here; rank 0 decides for all
    decision = [measure_kernels(gptconf, batch_size, ptdtype, device, compile, kernels_cache, overrides,
                                graphed=cuda_graph, model_args=gpt_args)
                if master_process else None]
    if ddp:
        dist.broadcast_object_list(decision, src=0)
    overrides, kernel_timings = decision[0]
try:
    model = GPT(gptconf, kernels=kernels, device_type=device_type, overrides=overrides, **gpt_args)
except ValueError as e:
    fail(e)
if ddp:  # every rank runs rank 0's choice: checked once, as a rank that differed would train another model
    chosen = [None] * ddp_world_size
    dist.all_gather_object(chosen, model.kernels)
    if any(c != chosen[0] for c in chosen):
        fail(f"the DDP ranks built different kernels: {chosen}")
    print(f"kernels: the same on all {ddp_world_size} ranks")
if ckpt is not None:
    try:
        model.load_state_dict(ckpt['model'])
    except RuntimeError as e:
        fail(f"checkpoint {ckpt_path} does not fit the model: {str(e).splitlines()[0]}")
    iter_num, best_val_loss = ckpt['iter_num'], ckpt['best_val_loss']
    print(f"resumed at iter {iter_num} (best val loss {best_val_loss:.4f})")
model.to(device)

scaler = torch.amp.GradScaler(device_type, enabled=(ptdtype == torch.float16))  # fp16 needs loss scaling
if optimizer not in ('adamw', 'muon'):
    fail(f"optimizer must be 'adamw' or 'muon', got {optimizer!r}")
ns_backend = kernels if use_triton_newton_schulz is None else 'triton' if use_triton_newton_schulz else 'torch'
muon = None if optimizer == 'adamw' else dict(lr=muon_lr, momentum=muon_momentum, weight_decay=muon_weight_decay,
                                              embed_lr=embed_lr or learning_rate, scalar_lr=scalar_lr or learning_rate,
                                              backend=ns_backend)
try:
    optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type, muon=muon,
                                           matmul_dtype=ptdtype if matmul_copies else None)
except ValueError as e:
    fail(e)
skipped_before = 0  # steps skipped for a non-finite loss or gradient before this run resumed
resume_rng = None  # this rank's generators at the checkpoint
saved_at = iter_num if init_from == 'resume' else None  # the iteration of the last good checkpoint
if ckpt is not None:
    if ckpt['config'].get('optimizer', 'adamw') != config['optimizer']:
        fail(f"checkpoint {ckpt_path} was trained with optimizer={ckpt['config'].get('optimizer', 'adamw')!r}, "
             f"this run asks for {config['optimizer']!r}: use the checkpoint's optimizer or another out_dir")
    base_lrs = [g['base_lr'] for g in optimizer.param_groups]  # this run's config, not the checkpoint's
    optimizer.load_state_dict(ckpt['optimizer'])
    for g, base_lr in zip(optimizer.param_groups, base_lrs):
        g['base_lr'] = base_lr
    scaler.load_state_dict(ckpt['scaler'])
    skipped_before = ckpt.get('nonfinite_steps', 0)
    rng = ckpt.get('rng')  # one state per rank
    if rng is not None and len(rng) == ddp_world_size:
        resume_rng = rng[ddp_rank]
    else:
        print(f"the checkpoint has the generators of {len(rng or [])} rank(s), this run {ddp_world_size}: dropout and "
              f"the data order start afresh (not the uninterrupted run bit for bit)")
ckpt = None  # free the memory

raw_model = model  # what is saved and what the MFU is computed on
if compile:
    print("compiling the model... (takes a minute)")
    model = compile_model(model, compile_mode)
if cuda_graph:  # made here: DDP must be built on the stream the step is recorded on (step_graph.py)
    graph_stream = torch.cuda.Stream()
if ddp:
    with torch.cuda.stream(graph_stream) if cuda_graph else nullcontext():
        model = DDP(model, device_ids=[ddp_local_rank] if device_type == 'cuda' else None)
    if cuda_graph:  # its weights' broadcast, before the first eval reads them
        torch.cuda.current_stream().wait_stream(graph_stream)
    refresh_matmul_copies(raw_model)  # from rank 0's weights, which DDP broadcast
    copies = [c for c in kept_copies(raw_model.parameters()) if c is not None]
    if copies:  # each rank's forward reads them: the same everywhere, or stop now (not a wrong first step)
        digest, digests = rank_digests(copies)
        if len(set(digests)) != 1:
            raise RuntimeError(f"ddp: the block matrices' copies differ across ranks after the weights' broadcast: {digests}")
        print(f"ddp: the block matrices' copies identical on all {ddp_world_size} ranks")

@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ('train', 'val'):
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split, f"eval {k}")
            torch.compiler.cudagraph_mark_step_begin()  # reduce-overhead: one graph replayed, not one recorded per batch
            with ctx:
                _, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean().item()
    model.train()
    return out

def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * (learning_rate - min_lr)

def peak_memory_mib():
    if device_type == 'cuda':
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # the process's peak RSS (KiB on Linux)

def rng_states():
    """Every rank's generators (a collective under DDP: all ranks call it at the same points)."""
    states = [None] * ddp_world_size
    if ddp:
        dist.all_gather_object(states, checkpoint.rng_state(device), group=control_group)
    else:
        states[0] = checkpoint.rng_state(device)
    return states

def save_checkpoint(rng):
    """Rank 0 writes everything a resumed run needs to continue exactly: weights, optimizer and
    scaler state, the iteration (it fixes the learning rate and the data), the ranks' generators."""
    global saved_at
    saved_at = iter_num
    if master_process:
        checkpoint.save({'model': raw_model.state_dict(), 'optimizer': optimizer.state_dict(),
                         'scaler': scaler.state_dict(), 'model_args': model_args, 'iter_num': iter_num,
                         'best_val_loss': best_val_loss, 'config': config, 'rng': rng,
                         'nonfinite_steps': int(nonfinite[0].item()), 'kernels': raw_model.kernels,
                         'kernel_timings': kernel_timings}, ckpt_path, keep_checkpoints)
        print(f"saved checkpoint to {ckpt_path} (iter {iter_num})")

# SIGTERM (a scheduler's preemption) or SIGINT (Ctrl-C): finish the step, save, exit cleanly
stop_signal, stop_time = None, None
def on_signal(signum, frame):
    global stop_signal, stop_time
    # a second one stops at once; one within a second is the same request twice (a scheduler
    # signals every process, and torchrun forwards what it gets)
    if stop_signal is not None:
        if time.time() - stop_time > 1.0:
            raise KeyboardInterrupt
        return
    stop_signal, stop_time = signal.Signals(signum).name, time.time()
    print(f"{stop_signal}: saving a checkpoint after this step, then exiting (send it again to stop at once)",
          file=sys.stderr, flush=True)

def stop_requested():
    """Whether any rank got a signal: all ranks then stop at the same step."""
    if not ddp:
        return stop_signal is not None
    flag = torch.tensor([float(stop_signal is not None)])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=control_group)
    return flag.item() > 0

if wandb_log and master_process:
    import wandb
    wandb.init(project=wandb_project, name=wandb_run_name, config=config)
    wandb.run.summary['kernels'] = raw_model.kernels
    wandb.run.summary['kernel_timings'] = kernel_timings

# training loop -------------------------------------------------------------------
if resume_rng is not None:  # here, after everything that draws at start-up (the weights' init, kernel measurement)
    checkpoint.set_rng_state(resume_rng, device)
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, on_signal)
nonfinite = torch.tensor([float(skipped_before), 0.0], device=device)  # steps skipped: in all, in a row (read on log steps)
loss_sum = torch.zeros((), device=device)  # the step's loss over its micro-steps (read on log steps)
skipped_logged = skipped_before
ended = None  # why the loop ended: 'max_iters', a signal's name, or 'eval_only'
def batch_name(micro_steps):
    """The training batch after this many micro-steps: '<iter> <micro-step>'."""
    return f"{micro_steps // gradient_accumulation_steps} {micro_steps % gradient_accumulation_steps}"
X, Y = get_batch('train', batch_name(iter_num * gradient_accumulation_steps))

def next_batch(micro_step):
    """This micro-step's batch, loaded during the last one; the next one loads while the GPU works."""
    global X, Y
    batch = X, Y
    X, Y = get_batch('train', batch_name(iter_num * gradient_accumulation_steps + micro_step + 1))
    return batch

def train_step(batch):
    """One optimizer step on the micro-steps' batches, batch(micro_step) -> (X, Y): forward and
    backward per micro-step (under DDP, gradients are only all-reduced on the last), the
    gradient's norm (clipped), the non-finite check, the optimizer. Its results go into loss_sum
    and nonfinite in place, and on CUDA nothing in it waits for the GPU: a CUDA graph can replay it."""
    loss_sum.zero_()
    for micro_step in range(gradient_accumulation_steps):
        if ddp:
            model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)
        X, Y = batch(micro_step)
        torch.compiler.cudagraph_mark_step_begin()  # reduce-overhead: the last replay's outputs may be reused
        with ctx:
            _, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        loss_sum.add_(loss.detach())
        scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # fp16: the true gradients, for the norm (no-op otherwise)
    params = [p for p in model.parameters() if p.grad is not None]
    grad_norm = (torch.nn.utils.clip_grad_norm_(params, grad_clip) if grad_clip != 0.0
                 else torch.nn.utils.get_total_norm([p.grad for p in params]))
    # non-finite? The gradient norm is the same on every rank (all-reduced gradients); a loss
    # is per rank, so its flag is all-reduced too: every rank decides alike, on the device
    bad = (~torch.isfinite(loss_sum)).float()
    if not scaler.is_enabled():  # fp16: gradients that overflow are the scaler's (below)
        bad = torch.maximum(bad, (~torch.isfinite(grad_norm)).float())
    if ddp:
        dist.all_reduce(bad, op=dist.ReduceOp.MAX)
    nonfinite.copy_(torch.stack([nonfinite[0] + bad, (nonfinite[1] + bad) * bad]))  # a good step resets "in a row"
    if scaler.is_enabled():  # fp16: skips a step whose gradients overflow (a non-finite loss makes them so), lowers the scale
        scaler.step(optimizer)
        scaler.update()
    elif getattr(optimizer, '_step_supports_amp_scaling', False):  # fused AdamW, Muon: skip on the GPU, no host sync
        optimizer.found_inf = bad
        optimizer.step()
    elif not bad.item():  # AdamW on a CPU (foreach): decided on the host
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)

if cuda_graph:  # the graph reads each micro-step's batch from one place; the batches are copied there first
    inputs = [(torch.empty_like(X), torch.empty_like(Y)) for _ in range(gradient_accumulation_steps)]
    graphed_step = StepGraph(lambda: train_step(lambda micro_step: inputs[micro_step]), optimizer,
                             warmup=StepGraph.DDP_WARMUP if ddp else 3, stream=graph_stream)

    def step():
        for micro_step, buffers in enumerate(inputs):
            for buffer, tensor in zip(buffers, next_batch(micro_step)):
                buffer.copy_(tensor)
        graphed_step()
else:
    step = lambda: train_step(next_batch)
# time per iteration, logged: the mean since the last log, read after its host sync. Nothing syncs in between, so a
# step's host side can run many steps ahead of the GPU (a replayed CUDA graph is one launch): one iteration's host
# time is not its time. Evals and checkpoints are left out.
t_log, iters_logged = time.time(), 0
try:
    while True:
        lr = get_lr(iter_num) if decay_lr else learning_rate
        for param_group in optimizer.param_groups:
            set_lr(param_group, param_group['base_lr'] * lr / learning_rate)

        if iter_num % eval_interval == 0 or eval_only:
            if device_type == 'cuda':
                torch.cuda.synchronize()  # the steps queued before the eval end here, in their own time
            t_eval = time.time()
            rng = rng_states()  # before the eval: it draws nothing, and a resumed run redoes it
            if master_process:
                losses = estimate_loss()
                print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
                if wandb_log:
                    wandb.log({'iter': iter_num, 'train/loss': losses['train'], 'val/loss': losses['val'], 'lr': lr})
                if (losses['val'] < best_val_loss or always_save_checkpoint) and not eval_only:
                    best_val_loss = min(best_val_loss, losses['val'])
                    if iter_num > 0:
                        save_checkpoint(rng)
            t_log += time.time() - t_eval
        if eval_only:
            ended = 'eval_only'
            break

        step()

        iters_logged += 1
        if iter_num % log_interval == 0:  # every rank reads the counters: a stop must be every rank's
            lossf, skipped, in_a_row = torch.cat([loss_sum.view(1), nonfinite]).tolist()  # a host sync: only on log steps
            t1 = time.time()
            dt, t_log, iters_logged = (t1 - t_log) / iters_logged, t1, 0
            skipped, in_a_row = int(skipped), int(in_a_row)
            if skipped > skipped_logged:
                skipped_logged = skipped
                print(f"iter {iter_num}: steps skipped for a non-finite loss or gradient: {in_a_row} in a row, "
                      f"{skipped} in all")
            if in_a_row > skip_nonfinite:
                if master_process:
                    fail(f"iter {iter_num}: {in_a_row} step(s) in a row with a non-finite loss or gradient "
                         f"(skip_nonfinite={skip_nonfinite}): stopped; " + (
                             f"the last good checkpoint is {ckpt_path} (iter {saved_at})" if saved_at is not None
                             else "no checkpoint was written"))
                sys.exit(1)
            if master_process:
                mfu = raw_model.estimate_mfu(tokens_per_iter / ddp_world_size, dt, peak_flops)
                print(f"iter {iter_num}: loss {lossf:.4f}, time {dt * 1000:.2f}ms, {tokens_per_iter / dt:,.0f} tok/s, "
                      f"mfu {'n/a' if mfu is None else f'{mfu * 100:.2f}%'}, mem {peak_memory_mib():,.0f} MiB")
                if wandb_log:
                    wandb.log({'iter': iter_num, 'train/loss_step': lossf, 'lr': lr,
                               'tokens_per_s': tokens_per_iter / dt, 'mfu': mfu, 'peak_mem_mib': peak_memory_mib()})
        iter_num += 1
        if stop_requested():
            ended = stop_signal or 'a signal to another rank'
            break
        if iter_num > max_iters:
            ended = 'max_iters'
            break
    if ended != 'eval_only' and (always_save_checkpoint or ended != 'max_iters'):
        save_checkpoint(rng_states())
except RuntimeError as e:  # under DDP, a collective that failed: say which rank saw what, in one line
    if not ddp or not (isinstance(e, dist.DistError) or 'gloo' in str(e)):
        raise
    fail(f"rank {ddp_rank} at iter {iter_num}: a collective with the other ranks failed: another rank died, hung "
         f"or was stopped (waits end after ddp_timeout={ddp_timeout}s): {str(e).strip().splitlines()[0][:200]}")
if ended not in ('max_iters', 'eval_only'):
    print(f"stopped by {ended} at iter {iter_num}, checkpoint saved: resume with --init_from=resume")
skipped = int(nonfinite[0].item())
if skipped:
    print(f"{skipped} step(s) skipped for a non-finite loss or gradient")

if cuda_graph:
    print(f"cuda_graph: {graphed_step.replays} steps replayed from one CUDA graph (the first {graphed_step.warmup} ran as they are)")
if getattr(optimizer, 'graphs', None) is not None:  # Muon on one GPU (not under DDP)
    print(f"muon: {optimizer.graph_replays} steps replayed from CUDA graphs (the others launched eagerly)")
if ddp:  # DDP keeps replicas in step; check it once, cheaply, at the end
    digest, digests = rank_digests(raw_model.parameters())
    if len(set(digests)) == 1:
        print(f"ddp: weights identical on all {ddp_world_size} ranks (sha256 {digest[:12]})")
    else:
        print(f"ddp: WARNING: weights differ across ranks: {digests}")
    if cuda_graph:
        graphed_step.release()  # else destroying the group hangs on the NCCL kernels the graph holds
    del model  # release the DDP wrapper (it holds the process group) before the group goes
    # gloo's worker threads free each collective's work after the caller has gone on, and freeing tensors whose
    # Python objects are gone takes the GIL: a worker still waiting for it when the interpreter finalizes aborts
    # the rank ("terminate called without an active exception", about one CPU run in 4-8 after the digests'
    # gather). A pause with the GIL released lets them finish first.
    time.sleep(0.1)
    dist.destroy_process_group()
if wandb_log and master_process:
    wandb.finish()
