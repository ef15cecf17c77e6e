"""
The backend rule (kernels/backend.py) for every op, one table of cases: 'triton'
launches the forward and backward kernels once each, 'torch' launches none, 'auto'
takes the kernels where they can run (CUDA, or the CPU interpreter), falls back to
the PyTorch reference quietly on a plain CPU and without Triton, and on float64
inputs; a bad backend name is an error.
"""
import os
import sys
import importlib
import subprocess

import pytest
import torch

import kernels
import kernels.backend as backend
from conftest import ROOT, forward_backward, count_launches
from model import rotary_tables


def cases(device, dtype=torch.float32):
    """op -> (module, fn(backend) taking the args, args, indices of args without a gradient)."""
    rand = lambda *shape: torch.randn(*shape, device=device, dtype=dtype)
    cos, sin = (t.to(device=device, dtype=dtype) for t in rotary_tables(16, 8, 10000.0))
    return {
        'layer_norm': ('norm', lambda b: lambda x, w, r: kernels.layer_norm(x, w, residual=r, backend=b),
                       [rand(4, 32), rand(32), rand(4, 32)], ()),
        'rms_norm': ('norm', lambda b: lambda x, w: kernels.rms_norm(x, w, backend=b), [rand(4, 32), rand(32)], ()),
        'rotary': ('rotary', lambda b: lambda x, c, s: kernels.rotary(x, c, s, backend=b),
                   [rand(2, 3, 8, 16), cos, sin], (1, 2)),
        'swiglu': ('swiglu', lambda b: lambda x: kernels.swiglu(x, backend=b), [rand(4, 64)], ()),
        'gelu': ('gelu', lambda b: lambda x, bias: kernels.gelu(x, bias, backend=b), [rand(4, 32), rand(32)], ()),
    }

OPS = list(cases('cpu'))


def run(op, backend_name, device, dtype=torch.float32):
    """Forward and backward of the op with this backend; returns the outputs."""
    module, fn, args, no_grad = cases(device, dtype)[op]
    with torch.no_grad():
        outs = fn("torch")(*args)  # the output shapes, for the gradients that flow back
    dys = [torch.randn_like(o) for o in (outs if isinstance(outs, tuple) else (outs,))]
    return forward_backward(fn(backend_name), args, dys, no_grad)[0]


@pytest.fixture
def launches(monkeypatch):
    """launches(op) -> the live {kernel name: count} of the op's module."""
    return lambda op: count_launches(monkeypatch, importlib.import_module('kernels.' + cases('cpu')[op][0]))


@pytest.mark.parametrize("op", OPS)
def test_triton_torch_auto(op, launches, device):
    counts = launches(op)
    run(op, "triton", device)
    once = dict(counts)  # one forward and one backward launch, each kernel used (rotary has one for both)
    assert sum(once.values()) == 2 and all(once.values()), once
    run(op, "torch", device)
    assert counts == once
    run(op, "auto", device)  # every test run has CUDA or the interpreter: 'auto' means the kernels
    assert counts == {k: 2 * n for k, n in once.items()}


@pytest.mark.parametrize("op", OPS)
def test_plain_cpu_falls_back_quietly(op, launches, monkeypatch, capsys, device):
    if device == "cuda":
        pytest.skip("CUDA tensors never need the interpreter")
    counts = launches(op)
    monkeypatch.setattr(backend, "INTERPRET", False)
    run(op, "auto", device)
    module, fn, args, _ = cases(device)[op]
    as_tuple = lambda t: t if isinstance(t, tuple) else (t,)
    assert all(torch.equal(a, b) for a, b in zip(as_tuple(fn("auto")(*args)), as_tuple(fn("torch")(*args))))
    assert not any(counts.values())
    assert capsys.readouterr().out == ""  # a plain CPU run is not worth a message
    with pytest.raises(RuntimeError, match="CUDA"):
        fn("triton")(*args)


@pytest.mark.parametrize("op", OPS)
def test_without_triton_falls_back(op, launches, monkeypatch, device):
    counts = launches(op)
    monkeypatch.setattr(backend, "TRITON_AVAILABLE", False)
    run(op, "auto", device)
    assert not any(counts.values())
    module, fn, args, _ = cases(device)[op]
    with pytest.raises(RuntimeError, match="not installed"):
        fn("triton")(*args)


@pytest.mark.parametrize("op", OPS)
def test_float64_uses_torch_saying_so_once(op, launches, monkeypatch, capsys, device):
    monkeypatch.setattr(backend, "_said", set())  # forget earlier messages
    counts = launches(op)
    for _ in range(2):
        outs = run(op, "auto", device, torch.float64)
    assert outs[0].dtype == torch.float64 and not any(counts.values())
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and op in lines[0] and "float64" in lines[0], lines
    module, fn, args, _ = cases(device, torch.float64)[op]
    with pytest.raises(RuntimeError, match="dtype"):
        fn("triton")(*args)


@pytest.mark.parametrize("op", OPS)
def test_invalid_backend(op, device):
    module, fn, args, _ = cases(device)[op]
    with pytest.raises(ValueError, match="backend"):
        fn("cuda")(*args)


def test_traced_launches_carry_their_options_in_one_autotuner_per_kernel_and_options(monkeypatch):
    """While torch.compile traces a launcher, launch() hands wrap_triton the kernel wrapped once per launch options
    (the same object at every trace, which torch.compile records once) and the rest of the launch's arguments; a
    launch without options hands over the kernel itself."""
    handed = []
    monkeypatch.setattr(backend, 'is_wrap_triton_enabled', lambda: True)
    # wrap_triton(k)['grid'](*args, **meta) records what it was handed
    monkeypatch.setattr(backend, 'wrap_triton', lambda k: {'grid': lambda *a, **meta: handed.append((k, a, meta))})
    kernel = kernels.norm._norm_fwd_kernel
    for warps in (4, 4, 8):
        backend.launch(kernel)['grid'](1, 2, BLOCK=16, num_warps=warps, num_stages=2)
    backend.launch(kernel)['grid'](3, BLOCK=32)
    (four, args, meta), (again, _, _), (eight, _, _), (plain, plain_args, plain_meta) = handed
    assert four is again and four is not eight and plain is kernel
    assert [(c.num_warps, c.num_stages, c.kwargs) for c in four.configs + eight.configs] == [(4, 2, {}), (8, 2, {})]
    assert four.fn is kernel and (args, meta) == ((1, 2), {'BLOCK': 16})
    assert (plain_args, plain_meta) == ((3,), {'BLOCK': 32})


@pytest.mark.skipif(not torch.version.cuda, reason="a CPU build of torch ships no ptxas: nothing to point Triton at")
def test_triton_builds_with_the_ptxas_of_inductors_compile_workers():
    """Triton's cache key holds the ptxas version: importing kernels points Triton at the ptxas that an Inductor
    compile worker picks (_set_triton_ptxas_path, run in each worker), so a kernel built here and in a worker has one
    key."""
    def ptxas_after(script):
        env = {k: v for k, v in os.environ.items() if k != 'TRITON_PTXAS_PATH'}
        script += "; import os; print(os.environ.get('TRITON_PTXAS_PATH'))"
        return subprocess.run([sys.executable, '-c', script], env=env, cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    worker = ptxas_after("from torch._inductor.runtime.compile_tasks import _set_triton_ptxas_path; "
                         "_set_triton_ptxas_path()")
    assert ptxas_after("import kernels") == worker
