"""
Config for the scripts, nanoGPT style. A script defines its settings as plain module
globals (int, float, bool, str or None; UPPER_CASE names are constants), then calls

    from configurator import configure
    config = configure(globals())

which applies, in order, each argument of sys.argv[1:]:
    config/train_shakespeare_char.py   a config file: a Python script that assigns some
                                       of those globals (it may import and compute; its
                                       own names start with _ or are UPPER_CASE)
    --batch_size=32                    one override; the value is a Python literal, and
                                       a str key takes the raw text (--out_dir=out-x)
    --compile                          a bool key alone means True
and updates the globals in place, returning {key: final value}. A value must have the
type of the key's default (an int is fine for a float). A None default takes anything;
None is accepted there and for the keys a script names optional (sample.py's top_k:
configure(globals(), optional=('top_k',))). Unknown keys, wrong types and missing files
end the program with fail(): a one-line `error: ...` on stderr and exit code 2, not a
traceback; the scripts' own refusals (ValueErrors) do the same inside `with user_errors():`.
--help lists every key with its default and the comment on its line. A script that
borrows another's config files (bench.py takes the model of a training config) passes
skip_unknown_in_files=True: keys in a file that the script does not have are then
skipped, with one line naming them. device_and_autocast() resolves (or refuses) the
device and dtype keys of train.py, sample.py and eval.py.
"""
import os
import re
import ast
import sys
import types
import difflib
from contextlib import contextmanager, nullcontext

import torch

CONFIG_TYPES = (int, float, bool, str, type(None))

def fail(message):
    """`error: <message>` on stderr as one line in one write (the ranks under torchrun fail together, each line
    whole), then exit code 2: for what the user can fix, without a traceback."""
    sys.stderr.write("error: " + " ".join(str(message).split("\n")) + "\n")
    sys.exit(2)

def first_line(e):
    """What a one-line error quotes of an exception: its message's first line (its type's name without one)."""
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]

@contextmanager
def user_errors():
    """A ValueError raised inside is the user's to fix (a setting, a file): it ends the program as fail() does."""
    try:
        yield
    except ValueError as e:
        fail(e)

def _unknown(key, keys, where):
    close = difflib.get_close_matches(key, keys, n=3)
    hint = f"did you mean: {', '.join(close)}?" if close else "run with --help to list the keys"
    helper = f"; a name of the file's own starts with _ or is UPPER_CASE (_{key})" if where else ""
    fail(f"unknown config key '{key}'{where} ({hint}{helper})")

def _checked(name, value, default, optional):
    """value, if it has the type of the key's default (an int is fine for a float), or None for an optional key."""
    if default is None or (value is None and optional):
        return value
    if type(default) is float and type(value) is int:
        return float(value)
    if type(value) is not type(default):  # `is`, so that True is no int and 1 no bool
        fail(f"{name} expects {type(default).__name__}, got {value!r} ({type(value).__name__})")
    return value

def _parse(raw, default):
    """The value of --key=raw: a Python literal, else the raw text. None is None for every
    key, str keys included (--top_k=None; --x="'None'" is the text)."""
    if isinstance(default, bool) and raw in ('true', 'false'):
        return raw == 'true'
    if raw == 'None':
        return None
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw
    if isinstance(default, str) and not isinstance(value, str):
        return raw  # --wandb_run_name=123 means the text '123'; --x='a' means a
    return value

def _comments(path):
    """{key: its comment} from a script's `key = value  # comment` lines."""
    with open(path) as f:
        lines = [re.match(r'^(\w+) = [^#]*?#\s*(.*)$', line.rstrip()) for line in f]
    return {m.group(1): m.group(2) for m in lines if m}

def command_line_keys(argv=None):
    """The keys set on the command line (--key=value), as opposed to defaults and config files."""
    argv = sys.argv[1:] if argv is None else argv
    return {arg[2:].partition('=')[0] for arg in argv if arg.startswith('--')}

def configure(g, argv=None, skip_unknown_in_files=False, optional=()):
    argv = sys.argv[1:] if argv is None else argv
    defaults = {k: v for k, v in g.items()  # UPPER_CASE names are constants, not settings (an import's too)
                if not k.startswith('_') and not k.isupper() and isinstance(v, CONFIG_TYPES)}
    keys = list(defaults)
    if '--help' in argv or '-h' in argv:
        comments = _comments(g['__file__']) if os.path.isfile(g.get('__file__') or '') else {}
        width = max((len(f"{k} = {defaults[k]!r}") for k in keys), default=0)
        for k in keys:
            print(f"--{f'{k} = {defaults[k]!r}'.ljust(width)}  {comments.get(k, '')}".rstrip())
        sys.exit(0)
    for arg in argv:
        if not arg.startswith('--'):  # a config file
            if not os.path.isfile(arg):
                fail(f"config file '{arg}' not found" + ("" if arg.endswith('.py') else
                                                         " (a value goes with its key, in one argument: --key=value)"))
            print(f"config: applying {arg}")
            with open(arg) as f:
                source = f.read()
            before = {k: g[k] for k in keys}
            scope = dict(before)  # the file sees (and may compute from) the current values
            try:
                exec(compile(source, arg, 'exec'), scope)
            except Exception as e:
                fail(f"config file '{arg}' failed: {type(e).__name__}: {e}")
            skipped = []
            for k, v in scope.items():
                if k.startswith('_') or k.isupper() or callable(v) or isinstance(v, types.ModuleType):
                    continue  # __builtins__, imports, the file's own constants and helper functions
                if k not in defaults:
                    if skip_unknown_in_files:
                        skipped.append(k)
                        continue
                    _unknown(k, keys, f" in {arg}")
                if v is not before[k]:
                    g[k] = _checked(f"{k} in {arg}", v, defaults[k], k in optional)
            if skipped:
                print(f"config: not used here: {', '.join(skipped)}")
        else:
            key, eq, raw = arg[2:].partition('=')
            if key not in defaults:
                _unknown(key, keys, "")
            if not eq and not isinstance(defaults[key], bool):
                fail(f"{arg} has no value: use --key=value (one argument, no spaces)")
            g[key] = _checked(f"--{key}", _parse(raw, defaults[key]) if eq else True, defaults[key], key in optional)
            print(f"config: {key} = {g[key]!r}")
    return {k: g[k] for k in keys}


def device_and_autocast(device, dtype):
    """The device and dtype keys resolved, or refused in one line where they cannot run here: 'auto' is the GPU
    where there is one (else Apple's, else the CPU), and bf16 there (fp16 where bf16 is not supported), fp32
    elsewhere; under torchrun a CUDA device is the rank's own GPU (LOCAL_RANK). A CUDA device is made current before
    anything else touches CUDA. Returns (device, its type, the dtype, the autocast context)."""
    if device == 'auto':
        device = 'cuda' if torch.cuda.is_available() else 'mps' if torch.backends.mps.is_available() else 'cpu'
    if str(device).startswith('cuda') and 'RANK' in os.environ:  # torchrun's, as nanoGPT: whatever index was asked
        device = f"cuda:{os.environ['LOCAL_RANK']}"
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError):
        parsed = None
    present = {'cuda': torch.cuda.device_count, 'mps': lambda: int(torch.backends.mps.is_available()),
               'cpu': lambda: 1}  # how many devices of each type
    if parsed is None or parsed.type not in present:
        fail(f"device must be 'auto', 'cpu', 'cuda', 'cuda:<index>' or 'mps', got {device!r}")
    if (parsed.index or 0) >= present[parsed.type]():
        fail(f"device={device} but this machine has {present[parsed.type]()} {parsed.type.upper()} device(s); "
             f"use --device=cpu")
    device_type = parsed.type
    if device_type == 'cuda':
        torch.cuda.set_device(parsed.index or 0)  # (an index: set_device refuses a device without one)
    if dtype == 'auto':
        dtype = ('bfloat16' if torch.cuda.is_bf16_supported() else 'float16') if device_type == 'cuda' else 'float32'
    ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}.get(dtype)
    if ptdtype is None:
        fail(f"dtype must be 'auto', 'float32', 'bfloat16' or 'float16', got {dtype!r}")
    if device_type == 'cpu' and ptdtype != torch.float32:  # (nanoGPT runs fp32 on a CPU whatever dtype says)
        print(f"dtype={dtype} on the CPU: autocast runs, most CPUs slower than in float32 ('auto' picks float32)")
    ctx = nullcontext() if ptdtype == torch.float32 else torch.autocast(device_type=device_type, dtype=ptdtype)
    return device, device_type, ptdtype, ctx
