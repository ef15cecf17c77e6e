"""
Which tensor arguments torch.compile's Inductor believes each of our Triton kernels writes,
by its own analysis of the kernel's TTIR (torch._higher_order_ops.triton_kernel_wrap).
Inductor clones every such tensor before the kernel and copies it back after, so an input
taken for an output costs two passes over it per call (GELU's once took about twice its
kernels' time: docs/perf-notes.md). Each launcher runs once on small CPU tensors with its launches
recorded, not run; prints as JSON the modules run, {kernel: the argument names written in any
of its launches} and {kernel: those of them that were the launcher's own inputs}.
tests/test_compile_writes.py runs it; by hand: python tests/inductor_writes.py
"""
import os
import re
import sys
import glob
import json
import importlib

os.environ.pop("TRITON_INTERPRET", None)  # the real compiler's TTIR, not the interpreter
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
try:  # torch 2.13
    from torch._higher_order_ops.triton_kernel_wrap import identify_accessed_tensors  # noqa: E402
    _analysed = lambda kernel, named: [dep.name
                                       for dep in identify_accessed_tensors(kernel, named, {}).read_writes.writes]
except ImportError:  # torch 2.11, on the GPU machines
    from torch._higher_order_ops.triton_kernel_wrap import identify_mutated_tensors  # noqa: E402
    _analysed = lambda kernel, named: identify_mutated_tensors(kernel, named, {})

# every kernels/ module whose launches go through backend.launch (wrap_triton under torch.compile), each run below:
# a call launch(_<kernel>) of backend's function, not a method or a helper of another name ending in it
LAUNCHES = re.compile(r"(?<![\w.])launch\(_")
LAUNCHING = sorted(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(ROOT, "kernels", "*.py"))
                   if LAUNCHES.search(open(path).read()) and not path.endswith("backend.py"))
modules = {name: importlib.import_module(f"kernels.{name}") for name in LAUNCHING}


class _Target:
    """An H100 as the compile target, where there is no GPU to ask (the analysis only compiles)."""
    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)


if not torch.cuda.is_available():
    triton.runtime.driver.set_active(_Target())

launches = []  # (kernel, args, kwargs, the data pointers of the launcher's input tensors)
launcher_inputs = set()


class _Recorder:
    """kernel[grid](*args, **kwargs), recorded instead of launched."""
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        return lambda *args, **kwargs: launches.append((self.kernel, args, kwargs, frozenset(launcher_inputs)))


def call(launcher, *args):
    """launcher(*args), its launches tagged with its input tensors."""
    launcher_inputs.clear()
    launcher_inputs.update(t.data_ptr() for t in args if torch.is_tensor(t) and t.numel())
    return launcher(*args)


for module in modules.values():
    module.launch = _Recorder


def written(kernel, args, kwargs, inputs):
    """(kernel name, the argument names Inductor's analysis marks written, those of them that
    are the launcher's inputs) for one recorded launch."""
    if isinstance(kernel, triton.runtime.Autotuner):  # Inductor analyses its first config
        kwargs = {**kwargs, **kernel.configs[0].kwargs}
        kernel = kernel.fn
    named = {**dict(zip(kernel.arg_names, args)), **kwargs}
    names = [name for name in _analysed(kernel, named) if isinstance(named.get(name), torch.Tensor)]
    return kernel.__name__, names, [name for name in names if named[name].numel() and named[name].data_ptr() in inputs]


def run_launchers():
    """Each launcher once per variant of its kernels' constexprs (bias, residual, RMS, GQA, ...)."""
    bf16 = dict(dtype=torch.bfloat16)
    x, r, dy = (torch.randn(64, 96, **bf16) for _ in range(3))
    w, b = torch.randn(96), torch.randn(96)
    norm = modules["norm"]
    for residual, bias, is_rms in ((r, b, False), (None, None, False), (r, None, True)):
        y, h, stats = call(norm.norm_fwd, x, residual, w, bias, 1e-5, is_rms, torch.float32)
        h = x if residual is None else h  # what the backward reads: the normalised input
        call(norm.norm_bwd, torch.randn(64, 96), None if residual is None else dy, h, w, stats, is_rms,
             bias is not None)
    gelu = modules["gelu"]
    for bias in (None, b):
        call(gelu.gelu_fwd, x, bias, "none")
        call(gelu.gelu_bwd if bias is None else gelu.gelu_bwd_with_y,  # the output made again, or not
             dy, x, bias, "tanh")
    swiglu = modules["swiglu"]
    call(swiglu.swiglu_fwd, x)
    for launcher in (swiglu.swiglu_bwd, swiglu.swiglu_bwd_with_y):
        call(launcher, dy[:, :48], x)
    rotary = modules["rotary"]
    cos, sin = torch.randn(32, 16), torch.randn(32, 16)
    call(rotary.rotary_fwd, torch.randn(2, 3, 32, 32, **bf16), cos, sin, False)
    call(rotary.rotary_qkv_fwd, torch.randn(2, 32, 4 + 2 * 2, 32, **bf16), cos, sin, 6, True)
    attention = modules["attention"]
    for n_head, n_kv in ((2, 2), (4, 2)):
        qkv = torch.randn(2, 32, n_head + 2 * n_kv, 64, **bf16)
        q, k, v = attention.split_qkv(qkv, n_head)
        o, lse = call(attention.flash_attention_fwd, q, k, v, True, 0.125)
        call(attention.flash_attention_qkv_bwd, torch.randn_like(o), qkv, o, lse, True, 0.125)
        call(attention.flash_attention_bwd, torch.randn_like(o), q, k, v, o, lse, False, 0.125)
    call(modules["rowwise_fp8"].rowwise_fp8_fwd, x)
    ce = modules["linear_cross_entropy"]
    for softcap, grads in ((None, False), (30.0, True)):
        loss, dx, dw, n = call(ce.linear_cross_entropy_fwd, torch.randn(16, 32), torch.randn(40, 32),
                               torch.randint(40, (16,)), -1, softcap, 0.0, ce.CHUNK_BYTES, grads)
    call(ce.linear_cross_entropy_bwd, dx, dw, torch.tensor(0.5), torch.float32)


if __name__ == "__main__":
    run_launchers()
    writes, inputs_written = {}, {}
    for launch in launches:  # a kernel's writes over all its launches
        name, names, inputs = written(*launch)
        writes[name] = sorted(set(writes.get(name, [])) | set(names))
        inputs_written[name] = sorted(set(inputs_written.get(name, [])) | set(inputs))
    print(json.dumps(dict(modules=LAUNCHING, writes=writes, inputs_written=inputs_written)))
