"""
What every op in kernels/ shares: importing Triton when it is there, the backend rule,
the launch helpers, and two facts of the device: cuBLAS without its workspace (for a
step recorded as a CUDA graph) and the GPUs' peak FLOP/s (for MFU).

backend='torch'  : always the PyTorch reference.
backend='triton' : always the Triton kernel; a clear error where it cannot run.
backend='auto'   : Triton where it can run (CUDA tensors, or any tensor under
                   TRITON_INTERPRET=1, the CPU interpreter CI uses), PyTorch otherwise.
"""
import os
import math
import functools
import contextlib

import torch
import torch._functorch.config
# private: eager launches skip the traceable path
from torch._library.triton import set_wrap_triton_enabled, is_wrap_triton_enabled
from torch.library import wrap_triton

try:
    import triton
    import triton.language as tl
    TRITON_AVAILABLE = True
except ImportError:
    TRITON_AVAILABLE = False

    class _NoTriton:
        """Stands in for triton and triton.language so kernel modules still import;
        nothing is ever launched through it (use_triton() returns False first)."""
        constexpr = None

        @staticmethod
        def jit(fn=None, **options):
            return fn if fn is not None else (lambda fn: fn)

    triton = tl = _NoTriton()

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"

# Inductor's compile workers point Triton at the ptxas torch ships (where it ships one), and Triton's cache key holds
# the ptxas version, which its first use in a process fixes. This process takes the same one by torch's own rule,
# before any use: a kernel built by a worker and the same kernel built here (a warm start builds some here while the
# worker pool starts) then share one cache entry.
if torch.version.cuda:
    from torch._inductor.runtime.compile_tasks import _set_triton_ptxas_path
    _set_triton_ptxas_path()

def _interpreter_as_on_gpu():
    """Four gaps in Triton 3.6's CPU interpreter, closed so that it computes what the GPU
    does: it rounds fp32 -> bf16 toward zero (the GPU rounds to nearest even); it rounds
    fp32 -> e4m3 without carrying into the exponent (31.7 becomes 16; the GPU rounds to
    nearest even and saturates at +-448, as torch's cast of a clamped tensor does); tl.dot
    multiplies bf16 tiles' raw 16-bit patterns as integers (it gets their fp32 values
    instead: exact, as the tensor cores' products with fp32 accumulation); tl.fma rounds
    twice, the product and then the sum (the GPU's FMA rounds once: here the fp32 product,
    exact in fp64, and the sum in fp64, rounded to fp32: once but for the rare sums that
    fp64 cannot hold either)."""
    import numpy as np
    from triton.runtime import interpreter
    Builder, TensorHandle = interpreter.InterpreterBuilder, interpreter.TensorHandle
    cast, create_dot, create_fma = Builder.cast_impl, Builder.create_dot, Builder.create_fma
    fp_to_fp = Builder.create_fp_to_fp

    def cast_rne(self, src, dst_type):
        if src.dtype.scalar != tl.float32 or dst_type.scalar != tl.bfloat16:
            return cast(self, src, dst_type)
        bits = np.asarray(src.data, dtype=np.float32).view(np.uint32)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # carries into the exponent
        return TensorHandle(np.where(np.isnan(src.data), np.uint16(0x7FC0), rounded), tl.bfloat16)

    def fp_to_e4m3_rne(self, src, dst_type, rounding_mode):
        if src.dtype.scalar != tl.float32 or dst_type.scalar != tl.float8e4nv:
            return fp_to_fp(self, src, dst_type, rounding_mode)
        e4m3 = torch.from_numpy(np.asarray(src.data, np.float32)).clamp(-448, 448).to(torch.float8_e4m3fn)
        return TensorHandle(e4m3.view(torch.uint8).numpy(), tl.float8e4nv)

    def as_fp32(t):
        if t.dtype.scalar != tl.bfloat16:
            return t
        return TensorHandle((t.data.astype(np.uint32) << 16).view(np.float32), tl.float32)

    def create_bf16_dot(self, a, b, d, *args):
        return create_dot(self, as_fp32(a), as_fp32(b), d, *args)

    def create_fused_fma(self, x, y, z):
        if z.dtype.scalar != tl.float32:
            return create_fma(self, x, y, z)
        exact = np.asarray(x.data, np.float64) * np.asarray(y.data, np.float64) + np.asarray(z.data, np.float64)
        return TensorHandle(exact.astype(np.float32), z.dtype.scalar)
    Builder.cast_impl, Builder.create_dot, Builder.create_fma = cast_rne, create_bf16_dot, create_fused_fma
    Builder.create_fp_to_fp = fp_to_e4m3_rne

def _interpreter_patches_the_language_once():
    """Triton 3.6's interpreter swaps triton.language's functions for its own at each launch (and puts them back
    after), and again, never put back, at each call of a @triton.jit helper inside the kernel (tl.sum's and tl.max's
    too), reading every member of the language each time: a large share of an interpreted model step. A helper
    whose modules are swapped already skips it (docs/perf-notes.md)."""
    from triton.runtime import interpreter
    patch_lang, swapped = interpreter._patch_lang, set()  # ids of the modules swapped since the launch began

    def patch_lang_once(fn):
        modules = {id(v) for v in fn.__globals__.values() if v is tl or v is tl.core}
        if swapped and modules <= swapped:
            return interpreter._LangPatchScope()  # nothing to put back
        scope = patch_lang(fn)
        if not swapped:  # a launch (a helper runs inside one): the record ends with it
            put_back = scope.restore
            scope.restore = lambda: (put_back(), swapped.clear())
        swapped.update(modules)
        return scope
    interpreter._patch_lang = patch_lang_once

if INTERPRET and TRITON_AVAILABLE:
    _interpreter_as_on_gpu()
    _interpreter_patches_the_language_once()
BACKENDS = ("auto", "triton", "torch")
TRITON_DTYPES = (torch.float32, torch.bfloat16, torch.float16)

_said = set()

def say_once(message):
    """One printed line per distinct fallback reason, not one per call."""
    if message not in _said:
        _said.add(message)
        print(message)

def why_not_triton_on(device_type):
    """The reason Triton cannot run on tensors of this device type, or None if it can."""
    if not TRITON_AVAILABLE:
        return "Triton is not installed"
    if device_type != "cuda" and not INTERPRET:
        return f"tensors on {device_type} need CUDA (or TRITON_INTERPRET=1)"
    return None

def use_triton(op, backend, *tensors, limit=None):
    """Resolve `backend` for one call of `op` on these tensors (None entries allowed).
    `limit` is an op-specific reason the kernel cannot take these inputs (e.g. a width
    too large), or None. 'auto' falls back to PyTorch quietly where Triton cannot run at
    all (a plain CPU run), and with one printed line per reason where it could run but
    not on these inputs."""
    if backend not in BACKENDS:
        raise ValueError(f"{op}: backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "torch":
        return False
    tensors = [t for t in tensors if t is not None]
    where = next(filter(None, (why_not_triton_on(t.device.type) for t in tensors)), None)
    unsupported = next((f"dtype {t.dtype} is not one of fp32, bf16, fp16"
                        for t in tensors if t.dtype not in TRITON_DTYPES), limit)
    if where is None and unsupported is None:
        return True
    if backend == "triton":
        raise RuntimeError(f"{op}: backend='triton' cannot run here: {where or unsupported}")
    if where is None:
        say_once(f"{op}: using PyTorch ({unsupported})")
    return False

_tables, _captured = {}, []

def device_table(rows, device, key=None, dtype=torch.int64):
    """A small table on the device, int64 unless dtype says (the muon_update and adamw kernels read
    their tensors' addresses from one), made once per content: the addresses of a training run's tensors
    repeat from step to step (the caching allocator hands out the same blocks), and a CUDA
    graph of a step reads the table it was captured with. Copied from pinned memory: a copy
    from pageable memory would wait for the GPU. key: what the rows follow from, where that is
    shorter than they are (rows is then a function making them, called only for a new key).
    A table made while a CUDA graph is captured is filled by the graph's copy at each replay,
    from its pinned source: both are kept for the process, and the table is not handed to
    calls outside that graph (it holds nothing before the first replay)."""
    key = (device, dtype, tuple(map(tuple, rows)) if key is None else key)
    if key in _tables:
        return _tables[key][1]
    host = torch.tensor(rows() if callable(rows) else rows, dtype=dtype)
    host = host.pin_memory() if device.type == "cuda" else host
    table = host.to(device, non_blocking=True)
    if _capturing(device):
        _captured.append((host, table))
    else:
        if len(_tables) >= 64:  # addresses that stopped repeating: start afresh (never mid-capture, above)
            _tables.clear()
        _tables[key] = (host, table)
    return table

def _capturing(device):
    """Whether the current stream of `device` is capturing a CUDA graph."""
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()

def device_tables():
    """The tables made so far, with their pinned sources. A CUDA graph that captured a kernel
    reading one reads it at every replay: the graph's owner must hold on to them (the cache
    may let them go)."""
    return tuple(_tables.values()) + tuple(_captured)

def device_scalar(x, device):
    """x, a number or a 0-d tensor, as a 0-d fp32 tensor on `device` for a kernel to read there
    (a CUDA graph's replays read its current value): a number by a fill kernel, no copy to wait on."""
    return x.to(device, torch.float32).reshape(()) if torch.is_tensor(x) else torch.full((), x, device=device)

def cdiv(a, b):
    """ceil(a / b) on the host, as triton.cdiv: Triton's is a constexpr function whose
    wrapper costs host time at every call of an eager step."""
    return -(-a // b)

def next_power_of_2(n):
    """triton.next_power_of_2 for the host (0 for 0, as Triton's), without its wrapper."""
    return 1 << (n - 1).bit_length() if n > 0 else 0

def as_rows(t):
    """t (..., N) as an (M, N) view with contiguous columns (a 0-d t as (1, 1)), copying only if it must:
    the kernels take any row stride but need unit column stride."""
    t = t.reshape(math.prod(t.shape[:-1]), t.shape[-1]) if t.dim() else t.reshape(1, 1)
    return t if t.stride(-1) == 1 or t.numel() == 0 else t.contiguous()

def rows_of(t):
    """(t, the stride between its rows) for t (..., N) read as rows of N contiguous columns:
    t itself where it is contiguous (no view made: each costs host time per call in an eager
    step), else as_rows(t)."""
    if t.is_contiguous():
        return t, t.shape[-1]
    t = as_rows(t)
    return t, t.stride(0)

def row_ranges(M, device, block_m=1, per_sm=4):
    """(rows_per_program, programs): M rows cut into contiguous ranges, about per_sm
    ranges per SM, each a multiple of block_m rows. For persistent kernels: their
    programs keep per-program partial sums (weight gradients, a few rows of them, not
    one per row) and pipeline the loads of the next rows along the range."""
    rows = cdiv(max(1, cdiv(M, per_sm * num_sms(device))), block_m) * block_m
    return rows, max(1, cdiv(M, rows))

def for_compile(name, fake, traceable=True):
    """Decorator for a launcher whose kernels are launched as launch(kernel)[grid](...).
    Registers it as the op kernels::<name> for torch.compile (one graph node, no graph
    break): with torch.library.triton_op, so that Inductor sees the Triton kernels and
    launches them from its own generated code, without a Python dispatch per call; under
    the CPU interpreter, which cannot run on fake tensors, with traceable=False (a
    launcher whose body torch.compile cannot trace), or with no GPU (triton_op imports
    Inductor, slow, for scripts that never run a kernel), as an opaque custom op whose
    output shapes `fake` gives. The function returned calls the op only while
    torch.compile traces; in eager mode it calls the launcher, launching the kernels
    directly: both the op's dispatch and wrap_triton's traceable path cost more Python
    time than the kernels take on the GPU (docs/perf-notes.md)."""
    def wrap(launcher):
        if INTERPRET or not traceable or not torch.cuda.is_available():
            op = torch.library.custom_op(f"kernels::{name}", launcher, mutates_args=())
            op.register_fake(fake)
        else:
            op = torch.library.triton_op(f"kernels::{name}", launcher, mutates_args=())

        @functools.wraps(launcher)
        def call(*args):
            if torch.compiler.is_compiling():
                return op(*args)
            with set_wrap_triton_enabled(False):
                return launcher(*args)
        return call
    return wrap

# The kernels' autograd Functions (and model.py's) sit in the compiled training graph, whose forward and backward
# Dynamo traces into the graph that AOTAutograd's cache key hashes: that cache may take such graphs (PyTorch's default
# bypasses it), and a warm start reads the compiled forward and backward instead of tracing them again.
torch._functorch.config.autograd_cache_allow_custom_autograd_functions = True

def launch(kernel):
    """What the launchers call as launch(kernel)[grid](*args, **meta): wrap_triton's traceable
    kernel while torch.compile traces them (for_compile), Triton's own launch otherwise."""
    return _Traced(kernel) if is_wrap_triton_enabled() else kernel

class _Traced:
    """launch(kernel)[grid](*args, **meta) while torch.compile traces: meta's launch options
    (num_warps, num_stages) go to wrap_triton inside a one-config autotuner made once per kernel
    and options. Given at the call, torch.compile records the kernel with its options as a new
    kernel at every trace, and Inductor writes the source of every kernel recorded so far into
    each graph it compiles (its fx_graph_runnable): a cold start's work growing with traces times
    graphs (docs/perf-notes.md, start-up)."""
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        def call(*args, **meta):
            options = tuple((name, meta.pop(name)) for name in ('num_warps', 'num_stages') if name in meta)
            return wrap_triton(_with_options(self.kernel, options) if options else self.kernel)[grid](*args, **meta)
        return call

@functools.lru_cache(maxsize=None)
def _with_options(kernel, options):
    return triton.autotune([triton.Config({}, **dict(options))], key=[])(kernel)

@functools.lru_cache(maxsize=None)
def _sm_count(device_index):
    return torch.cuda.get_device_properties(device_index).multi_processor_count

def num_sms(device):
    """Streaming multiprocessors of the device, to size persistent grids. The CPU
    interpreter gets a small number so the multi-row-per-program path is exercised."""
    if device.type != "cuda":
        return 4
    return _sm_count(device.index if device.index is not None else torch.cuda.current_device())


@contextlib.contextmanager
def cublas_without_workspace():
    """cuBLAS (and cuBLASLt, which shares its workspace) without a workspace inside the block, unless the
    user set CUBLAS_WORKSPACE_CONFIG (which then holds everywhere). For recording a step as a CUDA graph:
    the graph then has no cooperative cuBLAS kernels and the memsets before them, and GPT-2's graphed step
    runs faster (docs/perf-notes.md). Not for steps launched from Python: torch 2.11 reads the variable at
    every cuBLAS call, which costs host time per product. Where torch has setters for the sizes (2.13),
    they are used instead of the variables."""
    if 'CUBLAS_WORKSPACE_CONFIG' in os.environ:
        yield
        return
    if hasattr(torch.backends.cuda, 'cublas_workspace_size'):
        sizes = torch.backends.cuda.cublas_workspace_size, torch.backends.cuda.cublaslt_workspace_size
        before = [size() for size in sizes]
        for size in sizes:
            size(0)
        restore = lambda: [size(b) for size, b in zip(sizes, before)]
    else:
        ours = {'CUBLAS_WORKSPACE_CONFIG': ':0:0'}
        if 'CUBLASLT_WORKSPACE_SIZE' not in os.environ:  # larger than cuBLAS's, Lt warns and takes cuBLAS's
            ours['CUBLASLT_WORKSPACE_SIZE'] = '0'
        os.environ.update(ours)
        restore = lambda: [os.environ.pop(name) for name in ours]
    try:
        yield
    finally:
        restore()
        if torch.cuda.is_initialized():  # a stream used inside may keep an empty workspace: dropped
            torch._C._cuda_clearCublasWorkspaces()

# Dense bf16 tensor-core peak FLOP/s by GPU name, for MFU. The first key found in the
# device name wins, so more specific names come first.
GPU_PEAK_FLOPS = [
    ('H100 PCIe', 756e12), ('H100 NVL', 835e12), ('H100', 989e12), ('H200', 989e12), ('H800', 989e12),
    ('GH200', 989e12), ('B200', 2250e12), ('B100', 1750e12), ('A100', 312e12), ('A800', 312e12),
    ('L40S', 362e12), ('L40', 181e12), ('L4', 121e12), ('A10G', 70e12), ('A10', 125e12),
    ('RTX 4090', 165e12), ('RTX 3090', 71e12), ('A6000', 155e12), ('V100', 125e12), ('T4', 65e12),
]

def gpu_peak_flops(device):
    """(name, peak FLOP/s) of the device; peak is None for CPUs and GPUs not in the table."""
    if torch.device(device).type != 'cuda':
        return 'cpu', None
    name = torch.cuda.get_device_name(device)
    return name, next((flops for key, flops in GPU_PEAK_FLOPS if key in name), None)
