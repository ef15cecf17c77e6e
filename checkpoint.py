"""
Checkpoints that survive crashes and cannot run code.

save(): written to a temporary file beside the checkpoint, flushed to the disk, then
renamed over it (a rename within a directory is atomic): a crash at any moment leaves
either the old checkpoint or the new one, whole. keep > 1 keeps the last `keep`
saves as ckpt-<iter>.pt, hard links (no second copy on disk) to the files ckpt.pt
has been.

load(): torch.load(weights_only=True), which unpickles tensors and plain Python data
only: a checkpoint file cannot run code. A damaged, truncated or foreign file is a
ValueError that says so.

rng_state() / set_rng_state(): the random generators dropout draws from, so that a
resumed run continues exactly as the uninterrupted one would have.
"""
import os
import glob

import torch

KEYS = ('model', 'optimizer', 'scaler', 'model_args', 'iter_num', 'best_val_loss', 'config')  # what the scripts read


def _write_durably(obj, path):
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())  # the bytes on the disk before the name points at them
    os.replace(tmp, path)


def _sync_dir(path):
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename itself on the disk
    finally:
        os.close(fd)


def save(obj, path, keep=1):
    """Write obj to path atomically (see above); with keep > 1, the last `keep` saves stay as
    <path stem>-<iter_num>.pt beside it."""
    if keep <= 1:
        _write_durably(obj, path)
    else:
        stem = os.path.splitext(path)[0]
        numbered = f"{stem}-{obj['iter_num']:08d}.pt"
        _write_durably(obj, numbered)
        try:
            os.link(numbered, path + '.tmp')
            os.replace(path + '.tmp', path)
        except OSError:  # a file system without hard links: a second copy
            _write_durably(obj, path)
        # the newest by time, not by iteration: after resuming from an older one, the run's new
        # checkpoints are the ones to keep
        saves = sorted(glob.glob(glob.escape(stem) + '-[0-9]*.pt'), key=lambda f: (os.stat(f).st_mtime_ns, f))
        for old in saves[:-keep]:
            os.remove(old)
    _sync_dir(path)


def load(path, device):
    """The checkpoint at path, on `device`; ValueError naming the file and the fix if it is
    missing, damaged or not a checkpoint of train.py."""
    if not os.path.exists(path):
        raise ValueError(f"no checkpoint at {path}: train with init_from='scratch' first, or set out_dir to the run's folder")
    try:
        ckpt = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise ValueError(f"cannot read checkpoint {path} ({first}): the file is damaged, incomplete, or holds "
                         f"more than tensors and plain data; resume from another checkpoint (keep_checkpoints) "
                         f"or start again") from None
    missing = [k for k in KEYS if not isinstance(ckpt, dict) or k not in ckpt]
    if missing:
        raise ValueError(f"{path} is not a checkpoint of train.py (no {', '.join(missing)})")
    return ckpt


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
