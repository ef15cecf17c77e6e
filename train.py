"""
Train a GPT on one device or several. One device (GPU, or CPU for small runs):
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
import hashlib
import datetime
import resource
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import checkpoint
import hf
import hellaswag as hs
import parallel
from kernels import choose
from kernels.backend import gpu_peak_flops
from model import GPTConfig, GPT, compile_model, refresh_matmul_copies
from step_graph import StepGraph, set_lr
from configurator import configure, command_line_keys, fail, first_line, device_and_autocast, user_errors
from data.common import (read_meta, read_tokenizer, fitting_tokenizer, new_vocab_size, check_tokens, prepared_dir,
                         prepare_command)

# -----------------------------------------------------------------------------
# default config values: GPT-2 (124M) on OpenWebText
# I/O
out_dir = 'out'  # where checkpoints go (ckpt.pt, or FSDP's ckpt_sharded/)
eval_interval = 2000  # evaluate (and checkpoint) every this many iterations
log_interval = 1  # print the loss every this many iterations
eval_iters = 200  # batches per split in an evaluation
eval_only = False  # evaluate once and exit
always_save_checkpoint = True  # else only when val loss improves (a stop by signal saves either way)
hellaswag = None  # HellaSwag scored at every eval: a jsonl of its format, or '' for the validation set (downloaded)
init_from = 'scratch'  # 'scratch', 'resume' (out_dir's last checkpoint, or nanoGPT's), 'gpt2'..'gpt2-xl' or a HF folder
wandb_log = False  # log to Weights & Biases (WANDB_MODE=offline works without a network)
wandb_project = 'owt'  # its project
wandb_run_name = 'gpt2'  # its run's name
# data
dataset = 'openwebtext'  # data/<dataset>/, or a folder's path: train.bin, val.bin (and meta.json if char-level)
gradient_accumulation_steps = 5 * 8  # to emulate larger batches; split across DDP ranks
batch_size = 12  # micro-batch size
block_size = 1024  # context length in tokens
# model
arch = 'gpt2'  # 'gpt2' or 'llama' (RMSNorm, rotary, SwiGLU, grouped-query attention)
n_layer = 12  # transformer blocks
n_head = 12  # attention heads
n_kv_head = None  # key/value heads (grouped-query attention; not for a gpt2 going to Hugging Face); None = n_head
n_embd = 768  # width of the residual stream
dropout = 0.0  # for pretraining 0 is good, for finetuning try 0.1+
bias = False  # gpt2: biases in Linears and LayerNorms
rope_theta = 10000.0  # llama: the rotary embedding's base
gelu_approximate = 'none'  # gpt2's GELU: 'none' (erf) as nanoGPT, 'tanh' as GPT-2 (the MLP is then one fused op)
recompute = 'none'  # memory for time: 'activation' (norm and activation outputs remade) or 'mlp' (each MLP remade)
autocast_residual = False  # the residual stream in autocast's dtype (bf16): faster, less memory, another rounding
fp8 = False  # the blocks' forward and dx products in fp8 (e4m3, a scale per row; kernels/linear.py): faster, coarser
kernels = 'auto'  # 'auto' (Triton per op where measured faster), 'triton' or 'torch'; cached in kernels_cache.json
use_triton_layer_norm = None  # per-op overrides: True or False decides the op whatever `kernels` says
use_triton_rms_norm = None  # (None follows `kernels`)
use_triton_rotary = None
use_triton_mlp = None  # the MLP's GELU or SwiGLU
use_triton_attention = None
use_triton_cross_entropy = None  # the LM head and the loss as one op (the logits never made)
optimizer = 'adamw'  # 'adamw', or 'muon' for the blocks' matrices with AdamW for the rest
learning_rate = 6e-4  # max learning rate (AdamW's)
max_iters = 600000  # total number of training iterations
weight_decay = 1e-1  # AdamW, on matrices only
beta1 = 0.9  # AdamW's betas
beta2 = 0.95
grad_clip = 1.0  # clip gradients at this value, or disable if == 0.0
skip_nonfinite = 10  # steps with a non-finite loss or gradient are skipped; more in a row stop the run
muon_lr = 0.02  # Muon's learning rate (momentum 0.95, Nesterov, no weight decay)
# learning rate decay settings: linear warmup, then cosine decay to min_lr; Muon's lr follows the same curve
decay_lr = True  # whether to decay the learning rate
warmup_iters = 2000  # how many steps to warm up for
lr_decay_iters = 600000  # should be ~= max_iters per Chinchilla
min_lr = 6e-5  # minimum learning rate, should be ~= learning_rate/10 per Chinchilla
# DDP settings
backend = 'nccl'  # 'nccl', 'gloo', etc. (CPU ranks always use gloo)
ddp_timeout = 600  # seconds a rank waits for the others: a dead or hung rank ends the run
parallelism = 'ddp'  # under torchrun: 'ddp' (every rank keeps the whole model) or 'fsdp' (parallel.py: sharded)
# system
device = 'auto'  # 'auto', 'cpu', 'cuda', 'cuda:1', 'mps'
dtype = 'auto'  # 'auto' (bf16 where supported, else fp16 on CUDA, fp32 elsewhere), 'float32', 'bfloat16', 'float16'
compile = True  # use PyTorch 2.0 to compile the model to be faster
cuda_graph = True  # replay the whole step (micro-steps, clipping, AdamW, DDP's all-reduces) from one CUDA graph
seed = 1337  # the weights' init and the data order (and dropout) follow it
# -----------------------------------------------------------------------------
config = configure(globals(), optional=('wandb_run_name',))  # None: wandb names the run
lowest = dict.fromkeys(('batch_size', 'gradient_accumulation_steps', 'eval_interval', 'log_interval', 'eval_iters',
                        'ddp_timeout'), 1)
lowest |= dict.fromkeys(('max_iters', 'grad_clip', 'skip_nonfinite'), 0)  # a negative grad_clip flips the gradients
if bad := [f"{k}={config[k]!r} must be at least {low}" for k, low in lowest.items()
           if not (isinstance(config[k], (int, float)) and config[k] >= low)]:
    fail('; '.join(bad))
if not out_dir:
    fail("out_dir='' names no folder: give the run's folder")

# devices and DDP -------------------------------------------------------------
device, device_type, ptdtype, ctx = device_and_autocast(device, dtype)
dtype = str(ptdtype).removeprefix('torch.')
ddp = int(os.environ.get('RANK', -1)) != -1  # launched by torchrun?
if ddp:
    dist.init_process_group(backend=backend if device_type == 'cuda' else 'gloo',
                            timeout=datetime.timedelta(seconds=ddp_timeout))
    # the stop flag and the generators' states go through the CPU (gloo) whatever the devices
    control_group = (dist.new_group(backend='gloo', timeout=datetime.timedelta(seconds=ddp_timeout))
                     if device_type == 'cuda' else None)
    ddp_rank, ddp_local_rank, ddp_world_size = (int(os.environ[k]) for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE'))
    master_process = ddp_rank == 0  # logs, evaluates and checkpoints
    if gradient_accumulation_steps % ddp_world_size:
        fail(f"gradient_accumulation_steps={gradient_accumulation_steps} must be a multiple of the {ddp_world_size} "
             f"DDP ranks: use --gradient_accumulation_steps={ddp_world_size} or a multiple of it")
    gradient_accumulation_steps //= ddp_world_size
else:
    ddp_rank, ddp_world_size, master_process, control_group = 0, 1, True, None
if not master_process:  # one copy of every log line
    sys.stdout = open(os.devnull, 'w')
if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(seed + ddp_rank)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

if optimizer not in ('adamw', 'muon'):
    fail(f"optimizer must be 'adamw' or 'muon', got {optimizer!r}")
fsdp = ddp and parallelism == 'fsdp'  # one process: nothing to shard
if parallelism == 'fsdp' and not ddp:
    print("parallelism='fsdp': one process (no torchrun), so nothing is sharded")
if refused := parallel.refusal(parallelism, fsdp, optimizer, ptdtype):
    fail(refused)
if cuda_graph:  # what the recorded step cannot hold: another graph, a host sync
    why_not = ("it needs CUDA" if device_type != 'cuda' else "not under parallelism='fsdp'" if fsdp else
               "optimizer='muon' records CUDA graphs of its own" if optimizer != 'adamw' else
               "not with fp16 (its loss scaler is not written for replay)" if ptdtype == torch.float16 else
               "not with recompute and dropout (the recomputation replays dropout's draws from a random state the "
               "host reads when recording, which the replays would not advance)" if recompute != 'none' and dropout > 0
               else None)
    if why_not and 'cuda_graph' in command_line_keys():  # asked for here: an error; a default or a config's: gives way
        fail(f"cuda_graph=True: {why_not}")
    if why_not:
        print(f"cuda_graph: off, {why_not}")
        cuda_graph = False
gpu_name, peak_flops = gpu_peak_flops(device)
print(f"device {device} ({gpu_name}), dtype {dtype}, MFU against "
      + (f"{peak_flops / 1e12:.0f} TFLOP/s bf16 peak" if peak_flops else "no known peak"))

# data and model ----------------------------------------------------------------
ckpt, weights, tokenizer = None, None, None  # the checkpoint resumed, or the pretrained weights (hf.py) and tokenizer
model_args = dict(arch=arch, n_layer=n_layer, n_head=n_head, n_kv_head=n_kv_head, n_embd=n_embd, block_size=block_size,
                  bias=bias, vocab_size=None, dropout=dropout, rope_theta=rope_theta, gelu_approximate=gelu_approximate)
with user_errors():  # bad data, checkpoints and settings refused here, not met as a crash (or silent garbage) mid-run
    data_dir = prepared_dir(dataset)  # a dataset not prepared is refused before any weights are read
    meta, prepared_with = read_meta(data_dir), read_tokenizer(data_dir)  # characters, or prepare.py --tokenizer's
    asked = {k: v for k, v in model_args.items() if k in command_line_keys() and k in checkpoint.ARCH_KEYS}
    if init_from == 'resume':  # the checkpoint's model, as nanoGPT resumes; a differing key asked for is refused
        resume_path = checkpoint.latest(out_dir)
        print(f"resuming from {resume_path}")
        ckpt = checkpoint.load(resume_path, device)
        saved, tokenizer = GPTConfig(**ckpt['model_args']).__dict__, ckpt.get('tokenizer')
        vocab = {'vocab_size': meta['vocab_size']} if meta else {}  # the dataset's vocabulary is the model's too
        checkpoint.check_fits(f"checkpoint {resume_path}", saved, asked | vocab,
                              "use the checkpoint's settings and data, or another out_dir")
        checkpoint.check_optimizer(ckpt, resume_path, optimizer)
        model_args, block_size = saved, saved['block_size']
    elif init_from != 'scratch':  # the folder's model (its context cropped to block_size) and tokenizer
        print(f"initialising from {init_from}")
        (model_args, weights), tokenizer = hf.load(init_from, block_size), read_tokenizer(init_from)
        checkpoint.check_fits(init_from, GPTConfig(**model_args).__dict__, asked,
                              "the model is the folder's: leave those settings out")
        if meta and (read_meta(init_from) or {}).get('stoi') != meta['stoi']:  # (export.py copies a meta.json)
            raise ValueError(f"{init_from} reads its own vocabulary's tokens, not the characters of {meta['path']}")
    tokenizer = fitting_tokenizer(init_from, tokenizer, prepared_with, data_dir)  # the model's, or the dataset's
    model_args |= dict(dropout=dropout, vocab_size=model_args['vocab_size'] or new_vocab_size(meta, tokenizer))
    gptconf = GPTConfig(**model_args)
    overrides = choose.checked_overrides({n: config[f'use_triton_{n}'] for n in choose.OVERRIDES}, gptconf.arch)
    for split in ('train', 'val'):
        check_tokens(os.path.join(data_dir, f'{split}.bin'), gptconf.vocab_size, block_size,
                     f"from {meta['path']}" if meta else "the model's, as the dataset has no meta.json" + (
                         f"; data/shakespeare/prepare.py --tokenizer={tokenizer['source']} writes tokens of the "
                         f"model's own tokenizer" if tokenizer else ""), prepare_command(dataset))
    if hellaswag is not None:  # read (or downloaded) now: a bad file is refused here, not at the first eval
        hellaswag_examples, hellaswag_encode = hs.read(hellaswag), hs.encoder(tokenizer, gptconf.vocab_size)
if meta:
    print(f"vocab_size = {gptconf.vocab_size} (from {meta['path']})")
tokens_per_iter = gradient_accumulation_steps * ddp_world_size * batch_size * block_size
print(f"tokens per iteration: {tokens_per_iter:,} ({ddp_world_size} rank(s) x {gradient_accumulation_steps} "
      f"micro-steps x {batch_size} x {block_size})")

def get_batch(split, name):
    """The batch called `name` ('<iter> <micro-step>', 'eval <k>') of a split, at offsets that depend on (seed, split,
    name) alone: a resumed run reads the uninterrupted one's batches, at any number of ranks; every eval the same."""
    # a new memmap per batch: a long-lived one grows the process's memory (numpy keeps pages)
    data = np.memmap(os.path.join(data_dir, f'{split}.bin'), dtype=np.uint16, mode='r')
    key = hashlib.sha256(f"{seed} {split} {name}".encode()).digest()
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
measured, kernel_timings = None, None
if kernels == 'auto' and device_type == 'cuda':  # measured here; rank 0 decides for all
    decision = [choose.measure(gptconf, batch_size, ptdtype, device, compile, recompute, overrides)
                if master_process else None]
    if ddp:
        dist.broadcast_object_list(decision, src=0)
    measured, kernel_timings = decision[0]
with user_errors():  # the checkpoint's or the weights' names and shapes, and fp8 without kept copies, refused here
    impl = choose.resolve(kernels, gptconf, device_type, overrides, measured)
    with torch.device(device):  # the weights drawn where they live: no host-side init and copy
        model = GPT(gptconf, impl, recompute=recompute, autocast_residual=autocast_residual, fp8=fp8)
    if ckpt is not None or weights is not None:  # every name and shape checked first
        source = resume_path if ckpt else init_from
        model.load_state_dict(checkpoint.matched(model.state_dict(), weights or ckpt['model'], source))
    if fsdp:  # before the optimizer, which then holds the shards
        parallel.shard(model, ptdtype, device_type)
    optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type,
                                           muon=dict(lr=muon_lr) if optimizer == 'muon' else None,
                                           matmul_dtype=None if fsdp else ptdtype)  # FSDP casts what it gathers
if ckpt is not None:
    iter_num, best_val_loss = ckpt['iter_num'], ckpt['best_val_loss']
    print(f"resumed at iter {iter_num} (best val loss {best_val_loss:.4f})")
    before = dict(fp8=False, autocast_residual=False) | ckpt['config']  # (nanoGPT's have neither)
    if changed := [f"{k}={before[k]!r} before" for k in ('fp8', 'autocast_residual', 'learning_rate', 'weight_decay',
                   'beta1', 'beta2', 'muon_lr') if before.get(k, config[k]) != config[k]]:
        print(f"note: this run's settings differ from the run it resumes, and hold ({', '.join(changed)})")
scaler = torch.amp.GradScaler(device_type, enabled=(ptdtype == torch.float16))  # fp16 needs loss scaling
print(parallel.memory_summary(model, batch_size * block_size, gradient_accumulation_steps * ddp_world_size, ptdtype))
saved_at, saved_to = (iter_num, resume_path) if init_from == 'resume' else (None, None)  # the last good checkpoint
# steps skipped for a non-finite loss or gradient before this run resumed, and this rank's generators then
skipped_before, resume_rng = (0, None) if ckpt is None else checkpoint.restore(ckpt, optimizer, scaler, ddp_rank,
                                                                                ddp_world_size, model)
ckpt = weights = None  # free the memory

raw_model = model  # what is saved and what the MFU is computed on
if compile:
    print("compiling the model... (takes a minute)")
    model = compile_model(model)
if cuda_graph:  # made here: DDP must be built on the stream the step is recorded on (step_graph.py)
    graph_stream = torch.cuda.Stream()
if ddp and not fsdp:
    with torch.cuda.stream(graph_stream) if cuda_graph else nullcontext():
        model = DDP(model, device_ids=[ddp_local_rank] if device_type == 'cuda' else None)
    if cuda_graph:  # its weights' broadcast, before the first eval reads them
        torch.cuda.current_stream().wait_stream(graph_stream)
    refresh_matmul_copies(raw_model)  # from rank 0's weights, which DDP broadcast: every rank's forward reads them
    copies = [p.matmul_copy for p in raw_model.parameters() if hasattr(p, 'matmul_copy')]
    if copies and not parallel.replicas_agree(copies, "the block matrices' copies"):
        fail("the block matrices' copies differ across ranks after the weights' broadcast")
# whether a micro-step's backward reduces the gradients over the ranks (one process: nothing to reduce)
reduce_gradients = (raw_model.set_requires_gradient_sync if fsdp else
                    (lambda last: setattr(model, 'require_backward_grad_sync', last)) if ddp else (lambda last: None))

@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ('train', 'val'):
        losses = torch.zeros(eval_iters, device=device)  # no wait per batch: the host reads the next one meanwhile
        for k in range(eval_iters):
            X, Y = get_batch(split, f"eval {k}")
            with ctx:
                _, loss = model(X, Y)
            losses[k] = loss
        out[split] = losses.mean().item()
    if hellaswag is not None:  # eager, outside DDP: its padded rows take no recompilation
        with torch.compiler.set_stance('force_eager'):
            right = hs.right_answers(raw_model, hellaswag_examples, hellaswag_encode, device, ctx)
        print(f"step {iter_num}: {hs.summary(right, len(hellaswag_examples))}")
        out['hellaswag/acc_norm'] = right[1] / len(hellaswag_examples)
    model.train()
    return out

def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it >= lr_decay_iters:  # the cosine's end (nanoGPT's >, which divides 0 by 0 where it equals warmup_iters)
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * (learning_rate - min_lr)

def peak_memory_mib():
    if device_type == 'cuda':
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # the process's peak RSS (KiB on Linux)

def save_checkpoint(rng):
    """What a resumed run needs to continue exactly (the iteration fixes the lr and the data); under FSDP a
    collective."""
    global saved_at, saved_to
    info = {'scaler': scaler.state_dict(), 'model_args': model_args, 'iter_num': iter_num,
            'best_val_loss': best_val_loss, 'config': config, 'rng': rng, 'nonfinite_steps': int(nonfinite[0].item()),
            'kernels': raw_model.kernels, 'kernel_timings': kernel_timings, 'tokenizer': tokenizer}
    saved_at, saved_to = iter_num, checkpoint.save_run(info, raw_model, optimizer, out_dir, fsdp, ddp_rank)
    print(f"saved checkpoint to {saved_to} (iter {iter_num})")

stop_signal = checkpoint.StopSignal()  # SIGTERM or SIGINT: finish the step, save, exit cleanly

if wandb_log and master_process:
    import wandb
    wandb.init(project=wandb_project, name=wandb_run_name, config=config)
    wandb.run.summary['kernels'] = raw_model.kernels

# training loop -------------------------------------------------------------------
if resume_rng is not None:  # here, after everything that draws at start-up (the weights' init, kernel measurement)
    checkpoint.set_rng_state(resume_rng, device)
stop_signal.install()
nonfinite = torch.tensor([float(skipped_before), 0.0], device=device)  # steps skipped: in all, in a row
loss_sum = torch.zeros((), device=device)  # the step's loss over its micro-steps (read on log steps)
skipped_logged, ended = skipped_before, None  # ended: why the loop ended ('max_iters', a signal's name, 'eval_only')
def batch_name(micro_steps):
    """The training batch after this rank's micro_steps: '<iter> <micro-step of the whole step, over all ranks>'."""
    step, micro_step = divmod(micro_steps, gradient_accumulation_steps)
    return f"{step} {ddp_rank * gradient_accumulation_steps + micro_step}"
X, Y = get_batch('train', batch_name(iter_num * gradient_accumulation_steps))

def next_batch(micro_step):
    """This micro-step's batch, loaded during the last one; the next one loads while the GPU works."""
    global X, Y
    batch = X, Y
    X, Y = get_batch('train', batch_name(iter_num * gradient_accumulation_steps + micro_step + 1))
    return batch

def train_step(batch):
    """One optimizer step on the micro-steps' batches, batch(micro_step) -> (X, Y): forward and backward per
    micro-step (DDP all-reduces on the last), the clipped gradient norm, the non-finite check, the optimizer.
    Results go into loss_sum and nonfinite in place; nothing in it waits for the GPU: a CUDA graph can replay it."""
    loss_sum.zero_()
    for micro_step in range(gradient_accumulation_steps):
        reduce_gradients(micro_step == gradient_accumulation_steps - 1)  # on the last micro-step only
        X, Y = batch(micro_step)
        with ctx:
            _, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        loss_sum.add_(loss.detach())
        scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # fp16: the true gradients, for the norm (no-op otherwise)
    params = [p for p in model.parameters() if p.grad is not None]
    grad_norm = (torch.nn.utils.clip_grad_norm_(params, grad_clip) if grad_clip != 0.0
                 else torch.nn.utils.get_total_norm([p.grad for p in params]))
    grad_norm = grad_norm.full_tensor() if fsdp else grad_norm  # FSDP's: a DTensor, the shards' norm made whole
    # non-finite? The gradient norm is the same on every rank (all-reduced gradients); a loss
    # is per rank, so its flag is all-reduced too: every rank decides alike, on the device
    bad = (~torch.isfinite(loss_sum)).float()
    if not scaler.is_enabled():  # fp16: gradients that overflow are the scaler's (below)
        bad = torch.maximum(bad, (~torch.isfinite(grad_norm)).float())
    if ddp:
        dist.all_reduce(bad, op=dist.ReduceOp.MAX)
    nonfinite.copy_(torch.stack([nonfinite[0] + bad, (nonfinite[1] + bad) * bad]))  # a good step resets "in a row"
    if scaler.is_enabled():  # fp16: skips a step whose gradients overflow (as a non-finite loss makes them)
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
t_log, iters_logged, start_iter = time.time(), 0, iter_num  # start_iter: no checkpoint to write there (below)
try:
    while True:
        if iter_num > max_iters and not eval_only:  # checked before the step: a run resumed past max_iters takes none
            ended = 'max_iters'
            break
        lr = get_lr(iter_num) if decay_lr else learning_rate
        for param_group in optimizer.param_groups:
            set_lr(param_group, param_group['base_lr'] * lr / learning_rate)

        if iter_num % eval_interval == 0 or eval_only:
            if device_type == 'cuda':
                torch.cuda.synchronize()  # the steps queued before the eval end here, in their own time
            t_eval = time.time()
            rng = parallel.every_rank(checkpoint.rng_state(device), control_group)  # before the eval, which draws none
            if master_process or fsdp:  # FSDP: every rank runs the forward (and saves: a collective)
                losses = estimate_loss()
                print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
                if wandb_log and master_process:
                    wandb.log({'iter': iter_num, 'train/loss': losses['train'], 'val/loss': losses['val'], 'lr': lr}
                              | {k: v for k, v in losses.items() if k.startswith('hellaswag')})
                if (losses['val'] < best_val_loss or always_save_checkpoint) and not eval_only:
                    best_val_loss = min(best_val_loss, losses['val'])
                    if iter_num > start_iter:
                        save_checkpoint(rng)
            t_log += time.time() - t_eval
        if eval_only:
            ended = 'eval_only'
            break

        step()

        iters_logged += 1
        if iter_num % log_interval == 0:  # every rank reads the counters: a stop must be every rank's
            parallel.mean_over_ranks(loss_sum)  # the whole step's loss, not rank 0's micro-steps' alone
            lossf, skipped, in_a_row = torch.cat([loss_sum.view(1), nonfinite]).tolist()  # the only host sync
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
                             f"the last good checkpoint is {saved_to} (iter {saved_at})" if saved_at is not None
                             else "no checkpoint was written"))
                sys.exit(1)
            if master_process:
                mfu = raw_model.estimate_mfu(tokens_per_iter / ddp_world_size, dt, peak_flops)
                print(f"iter {iter_num}: loss {lossf:.6f}, time {dt * 1000:.2f}ms, {tokens_per_iter / dt:,.0f} tok/s, "
                      f"mfu {'n/a' if mfu is None else f'{mfu * 100:.2f}%'}, mem {peak_memory_mib():,.0f} MiB")
                if wandb_log:
                    wandb.log({'iter': iter_num, 'train/loss_step': lossf, 'lr': lr,
                               'tokens_per_s': tokens_per_iter / dt, 'mfu': mfu, 'peak_mem_mib': peak_memory_mib()})
        iter_num += 1
        if parallel.any_rank(stop_signal.name is not None, control_group):  # all ranks stop at one step
            ended = stop_signal.name or 'a signal to another rank'
            break
    if ended != 'eval_only' and iter_num > start_iter and (always_save_checkpoint or ended != 'max_iters'):
        save_checkpoint(parallel.every_rank(checkpoint.rng_state(device), control_group))
except RuntimeError as e:  # under DDP, a collective that failed: say which rank saw what, in one line
    if not ddp or not (isinstance(e, dist.DistError) or 'gloo' in str(e)):
        raise
    fail(f"rank {ddp_rank} at iter {iter_num}: a collective with the other ranks failed: another rank died, hung "
         f"or was stopped (waits end after ddp_timeout={ddp_timeout}s): {first_line(e)}")
if ended not in ('max_iters', 'eval_only'):
    print(f"stopped by {ended} at iter {iter_num}, checkpoint saved: resume with --init_from=resume")
skipped = int(nonfinite[0].item())
if skipped:
    print(f"{skipped} step(s) skipped for a non-finite loss or gradient")

if cuda_graph:
    print(f"cuda_graph: {graphed_step.replays} steps replayed from one CUDA graph, after {graphed_step.warmup} plain")
if getattr(optimizer, 'graphs', None) is not None:  # Muon on one GPU (not under DDP)
    print(f"muon: {optimizer.graph_replays} steps replayed from CUDA graphs (the others launched eagerly)")
if ddp:  # DDP keeps replicas in step; checked once, cheaply, at the end
    if not fsdp:  # FSDP's ranks hold shards, not replicas
        parallel.replicas_agree(raw_model.parameters(), "weights")
    if cuda_graph:
        graphed_step.release()  # else destroying the group hangs on the NCCL kernels the graph holds
    del model  # release the DDP wrapper (it holds the process group) before the group goes
    # gloo's worker threads free a collective's tensors after the caller has gone on, which takes the GIL: one still
    # waiting for it as the interpreter finalizes aborts the rank. A pause with the GIL released lets them finish.
    time.sleep(0.1)
    dist.destroy_process_group()
if wandb_log and master_process:
    wandb.finish()
