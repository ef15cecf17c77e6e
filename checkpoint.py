"""
Checkpoints that survive crashes and cannot run code, and the stop by signal that writes one.

save(): written to a temporary file beside the checkpoint, flushed to the disk, then
renamed over it (a rename within a directory is atomic): a crash at any moment leaves
either the old checkpoint or the new one, whole.

save_sharded(): FSDP's checkpoint, with torch.distributed.checkpoint (DCP): each rank writes
its shards into a new folder out_dir/ckpt_sharded/iter_<n>/, rank 0 the rest in meta.pt;
DCP renames the folder's .metadata into place last, after every rank's write, so a folder
holding one is whole, and the older folders go only then. Any number of ranks reads it back
(DCP reshards by name and offset), one process too.

latest(): what a resumed run reads, ckpt.pt or the newest whole sharded folder, whichever
was written last. load(): torch.load(weights_only=True), which unpickles tensors and plain
Python data only, and DCP's metadata through an unpickler that admits DCP's own records
only: a checkpoint cannot run code. A damaged, truncated or foreign file is a
ValueError that says so; so is one whose model differs from what the run asks for
(check_fits) or from the model's names and shapes (matched). nanoGPT's own ckpt.pt loads
too (from_nanogpt), its AdamW state matched to ours by parameter name (restore).

rng_state() / set_rng_state(): the random generators dropout draws from, so that a
resumed run continues exactly as the uninterrupted one would have.

StopSignal: SIGTERM (a scheduler's preemption) or SIGINT (Ctrl-C) asks the run to finish
its step, save and exit cleanly; a second one, later than a second after, stops at once.
"""
import os
import sys
import time
import pickle
import shutil
import signal
import warnings

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.metadata import TensorStorageMetadata
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_optimizer_state_dict,
                                                     set_optimizer_state_dict)
from torch.distributed.fsdp import FSDPModule

from configurator import first_line
from model import GPTConfig
from data.common import read_tokenizer

KEYS = ('model', 'optimizer', 'scaler', 'model_args', 'iter_num', 'best_val_loss', 'config')  # what the scripts read
SHARDED = 'ckpt_sharded'  # FSDP's checkpoints: out_dir/ckpt_sharded/iter_<n>/
# the model_args that fix the parameters' shapes and the model's math: a resumed run (or one started from a
# Hugging Face folder) takes the checkpoint's (the folder's), and one given on the command line must equal it
ARCH_KEYS = ('arch', 'n_layer', 'n_head', 'n_kv_head', 'n_embd', 'block_size', 'bias', 'vocab_size', 'rope_theta',
             'gelu_approximate', 'mlp_hidden', 'head_dim', 'norm_eps', 'tie_embeddings')


def save(obj, path):
    """Write obj to path atomically (see above)."""
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())  # the bytes on the disk before the name points at them
    os.replace(tmp, path)
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename itself on the disk
    finally:
        os.close(fd)


def save_run(info, model, optimizer, out_dir, sharded, rank):
    """info (what a resumed run needs beside the weights) with model's and optimizer's state: sharded by every rank
    (FSDP's, a collective), or whole in out_dir/ckpt.pt by rank 0. Returns the path written (None on other ranks)."""
    if sharded:
        return save_sharded(info, model, optimizer, out_dir, rank)
    path = os.path.join(out_dir, 'ckpt.pt')
    if rank == 0:
        save(info | {'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, path)
    return path if rank == 0 else None


def save_sharded(info, model, optimizer, out_dir, rank):
    """FSDP's model and optimizer, each rank's shards, with info (the rest of what ckpt.pt holds) in a new folder
    of out_dir/ckpt_sharded/ (see above); returns its path. A collective: every rank calls it."""
    folder = os.path.join(out_dir, SHARDED, f"iter_{info['iter_num']:08d}")
    if rank == 0:
        shutil.rmtree(folder, ignore_errors=True)  # an attempt that did not finish
        os.makedirs(folder)
        save(info, os.path.join(folder, 'meta.pt'))
    torch.distributed.barrier()  # the folder made before any rank writes in it
    model.reshard()  # the root's weights stay gathered after a forward without a backward (an evaluation)
    state = {'model': model.state_dict(), 'optimizer': get_optimizer_state_dict(model, optimizer)}
    dcp.save(state, checkpoint_id=folder)
    if rank == 0:  # the new folder is whole (its .metadata is in place): the others go
        for name in os.listdir(os.path.dirname(folder)):
            if name != os.path.basename(folder):
                shutil.rmtree(os.path.join(os.path.dirname(folder), name))
    return folder


def latest(out_dir):
    """The checkpoint of out_dir a resumed run reads: ckpt.pt or the newest whole folder of ckpt_sharded/, whichever
    was written last (ckpt.pt's path where there is neither)."""
    root = os.path.join(out_dir, SHARDED)
    whole = sorted(n for n in os.listdir(root) if os.path.exists(os.path.join(root, n, '.metadata'))) \
        if os.path.isdir(root) else []
    paths = [os.path.join(out_dir, 'ckpt.pt')] + ([os.path.join(root, whole[-1])] if whole else [])
    return max(paths, key=lambda p: os.path.getmtime(os.path.join(p, '.metadata') if os.path.isdir(p) else p)
               if os.path.exists(p) else -1.0)


class _Reader(dcp.FileSystemReader):
    """DCP's reader, its metadata unpickled with DCP's own records, torch's dtypes and sizes admitted, nothing
    else (DCP reads the tensors' bytes itself, and other values with torch.load(weights_only=True))."""
    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if (module in ('torch.distributed.checkpoint.metadata', 'torch.distributed.checkpoint.filesystem')
                    or (module, name) in (('torch', 'Size'), ('torch.serialization', '_get_layout'),
                                          ('pathlib', 'PosixPath'), ('collections', 'OrderedDict'))
                    or (module == 'torch' and isinstance(getattr(torch, name, None), torch.dtype))):
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"{module}.{name} is not DCP's metadata")

    def read_metadata(self, *args, **kwargs):
        with open(os.path.join(self.path, '.metadata'), 'rb') as f:
            metadata = self.Unpickler(f).load()
        metadata.storage_meta.load_id = self.load_id
        return metadata


def _read_sharded(state, folder):
    """state's tensors filled from a sharded checkpoint by this process alone (each rank reads what it holds)."""
    with warnings.catch_warnings():  # DCP's note that it reads in one process, which is what is asked
        warnings.filterwarnings('ignore', message='torch.distributed is disabled')
        dcp.load(state, storage_reader=_Reader(folder), no_dist=True)


def _read_model(folder):
    """The whole model's weights of a sharded checkpoint."""
    tensors = {k: m for k, m in _Reader(folder).read_metadata().state_dict_metadata.items()
               if k.startswith('model.') and isinstance(m, TensorStorageMetadata)}
    sd = {k: torch.empty(m.size, dtype=m.properties.dtype) for k, m in tensors.items()}
    _read_sharded(sd, folder)
    return {k.removeprefix('model.'): v for k, v in sd.items()}


def load(path, device):
    """The checkpoint at path (ckpt.pt, or a folder of FSDP's: its model whole, its optimizer's state read later by
    restore()), on `device`; ValueError naming the file and the fix if it is missing, damaged or not a checkpoint
    of train.py."""
    if not os.path.exists(path):
        raise ValueError(f"no checkpoint at {path}: train with init_from='scratch' first, "
                         f"or set out_dir to the run's folder")
    try:
        if os.path.isdir(path):
            ckpt = torch.load(os.path.join(path, 'meta.pt'), map_location=device, weights_only=True)
            ckpt |= dict(model=_read_model(path), optimizer=None, sharded=path)
        else:
            ckpt = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:
        raise ValueError(f"cannot read checkpoint {path} ({first_line(e)}): the file is damaged, incomplete, or holds "
                         f"more than tensors and plain data; start again") from None
    if isinstance(ckpt, dict) and 'scaler' not in ckpt and 'arch' not in ckpt.get('model_args', {'arch': 0}):
        ckpt = from_nanogpt(ckpt)
    missing = [k for k in KEYS if not isinstance(ckpt, dict) or k not in ckpt]
    if missing:
        raise ValueError(f"{path} is not a checkpoint of train.py (no {', '.join(missing)})")
    return ckpt


def from_nanogpt(ckpt):
    """A checkpoint of nanoGPT's train.py in this repo's form: its compiled model's '_orig_mod.' prefix and causal-mask
    buffers dropped, a fresh loss scaler, and the names of its AdamW state's parameters in order (nanoGPT's order
    differs from ours: its position embedding comes second), so that restore() matches the state by name."""
    model = {k.removeprefix('_orig_mod.'): v for k, v in ckpt.get('model', {}).items() if not k.endswith('.attn.bias')}
    names = [k for k in model if k != 'lm_head.weight']  # nanoGPT's parameters in order, the tied head once
    decay, no_decay = [n for n in names if model[n].dim() >= 2], [n for n in names if model[n].dim() < 2]
    return ckpt | dict(model=model, scaler={}, optimizer_names=decay + no_decay)


def weights(init_from, out_dir, device):
    """(GPTConfig's arguments, the state dict, the training config or None, the Hugging Face tokenizer or None) of
    out_dir's last checkpoint (init_from 'resume') or of pretrained weights (hf.py): what sample.py and eval.py build
    their model from."""
    if init_from != 'resume':
        import hf
        return *hf.load(init_from), None, read_tokenizer(init_from)
    ckpt = load(latest(out_dir), device)
    return ckpt['model_args'], ckpt['model'], ckpt['config'], ckpt.get('tokenizer')


def check_fits(source, saved, asked, fix):
    """ValueError where the model of source (a checkpoint or a folder; saved: its GPTConfig's fields, with the
    defaults of keys older checkpoints lack) differs from what the run asks for (asked: some of those fields), saying
    how to fix it."""
    try:  # as the model reads them: llama has no biases, n_kv_head None is n_head
        wanted = GPTConfig(**(saved | asked)).__dict__
    except ValueError:  # settings no model takes differ from any model's
        wanted = saved | asked
    differ = [k for k in asked if saved[k] != wanted[k]]
    if differ:
        raise ValueError(f"{source} has " + ", ".join(f"{k}={saved[k]!r}" for k in differ)
                         + " but this run asks for " + ", ".join(f"{k}={wanted[k]!r}" for k in differ)
                         + (" (the vocabulary of the run's dataset)" if 'vocab_size' in differ else "") + f": {fix}")


def check_optimizer(ckpt, path, optimizer):
    """ValueError where the checkpoint was trained with another optimizer than the run asks for."""
    trained_with = ckpt['config'].get('optimizer', 'adamw')
    if trained_with != optimizer:
        raise ValueError(f"checkpoint {path} was trained with optimizer={trained_with!r}, this run asks for "
                         f"{optimizer!r}: use the checkpoint's optimizer or another out_dir")


def matched(model_sd, sd, source):
    """sd, for load_state_dict: ValueError, naming the first difference, unless it holds every name of the model's
    state dict model_sd and no other, each with the model's shape."""
    missing, extra = sorted(set(model_sd) - set(sd)), sorted(set(sd) - set(model_sd))
    if missing or extra:
        raise ValueError(f"{source} does not fit the model: " + (f"no {missing[0]}" if missing else
                                                                  f"{extra[0]} is not the model's")
                         + f" ({len(missing)} missing, {len(extra)} unexpected)")
    for k, v in sd.items():
        if tuple(v.shape) != tuple(model_sd[k].shape):
            raise ValueError(f"{source} does not fit the model: {k} has shape {tuple(v.shape)}, "
                             f"the model's {tuple(model_sd[k].shape)}")
    return sd


def restore(ckpt, optimizer, scaler, rank, world_size, model):
    """The optimizer's and the loss scaler's state loaded from ckpt (each group keeps this run's settings: its
    learning rate, weight decay, betas; the checkpoint's moments and step counts are what resume); where the
    checkpoint names its optimizer's parameters (from_nanogpt), each one's state goes where model's optimizer has it.
    A sharded checkpoint's state is read here, resharded for model (FSDP's or whole) by DCP; a whole one's goes to
    FSDP's shards by name. Returns (the steps skipped before, this rank's generators or None where the ranks differ
    in number)."""
    settings = [{k: v for k, v in g.items() if k != 'params'} for g in optimizer.param_groups]
    if ckpt.get('sharded'):
        state = {'optimizer': get_optimizer_state_dict(model, optimizer)}
        _read_sharded(state, ckpt['sharded'])
        set_optimizer_state_dict(model, optimizer, state['optimizer'])
    else:
        name = {id(p): n for n, p in model.named_parameters()}
        names = [name[id(p)] for g in optimizer.param_groups for p in g['params']]  # the state's numbering
        state = ckpt['optimizer']
        saved = {n: i for i, n in enumerate(ckpt.get('optimizer_names', names))}
        state = dict(state, state={i: state['state'][saved[n]] for i, n in enumerate(names)
                                   if saved.get(n) in state['state']})
        if isinstance(model, FSDPModule):  # whole tensors, each rank keeping its shard of them
            by_name = dict(state={names[i]: s for i, s in state['state'].items()}, param_groups=[
                dict(g, params=[names[i] for i in g['params']]) for g in state['param_groups']])
            set_optimizer_state_dict(model, optimizer, by_name, options=StateDictOptions(full_state_dict=True))
        else:
            optimizer.load_state_dict(state)
    for g, own in zip(optimizer.param_groups, settings):
        g.update(own)
    if ckpt['scaler']:  # empty: a scaler that was off, or nanoGPT's checkpoint (which keeps none)
        scaler.load_state_dict(ckpt['scaler'])
    rng = ckpt.get('rng')  # one state per rank
    if (rng is None or len(rng) != world_size) and model.config.dropout > 0:
        print(f"the checkpoint has the generators of {len(rng or [])} rank(s), this run {world_size}: dropout's "
              f"draws start afresh (not the uninterrupted run's bit for bit)")
    return ckpt.get('nonfinite_steps', 0), rng[rank] if rng is not None and len(rng) == world_size else None


def rng_state(device):
    """This process's generators: the CPU's and, on a GPU, the device's."""
    state = {'cpu': torch.get_rng_state()}
    if torch.device(device).type == 'cuda':
        state['cuda'] = torch.cuda.get_rng_state(device)
    return state


def set_rng_state(state, device):
    torch.set_rng_state(state['cpu'].cpu())
    if 'cuda' in state:
        torch.cuda.set_rng_state(state['cuda'].cpu(), device)


class StopSignal:
    """The first SIGTERM or SIGINT received (its name in .name), once install() has run."""

    def __init__(self):
        self.name, self.time = None, None

    def install(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, frame):
        # one within a second of the first is the same request twice (a scheduler signals every process, and
        # torchrun forwards what it gets); a later one stops at once
        if self.name is not None:
            if time.time() - self.time > 1.0:
                raise KeyboardInterrupt
            return
        self.name, self.time = signal.Signals(signum).name, time.time()
        print(f"{self.name}: saving a checkpoint after this step, then exiting (send it again to stop at once)",
              file=sys.stderr, flush=True)
