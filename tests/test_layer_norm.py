"""
Tests of kernels.layer_norm: the Triton kernel (forward and backward) against PyTorch
and a float64 reference, mixed dtypes and autocast, strided inputs, the backend rule
and its fallbacks, import without Triton, torch.compile, determinism, empty inputs.

On a machine without a GPU the kernel runs in Triton's CPU interpreter (conftest.py).
"""
import importlib
import os
import subprocess
import sys
import zlib

import pytest
import torch
import torch.nn.functional as F

import kernels
import kernels.backend as backend
from conftest import ROOT, assert_close_3way

LN = importlib.import_module("kernels.layer_norm")  # the module; kernels.layer_norm is the function

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
SHAPES = [
    (1, 768),       # one row
    (3, 7),         # tiny, odd
    (1, 1),         # a single element
    (37, 1000),     # neither power of two; backward's last program runs past M
    (64, 768),      # GPT-2 width
    (16, 3072),     # its 4x MLP width
    (8, 4097),      # just over 4096
    (4, 32768),     # the widest required
    (2, 5, 384),    # 3-D input
]


@pytest.fixture(autouse=True)
def seed(request):
    # fresh random inputs per test, reproducible from the test's id
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def spies(monkeypatch):
    """Count calls of the forward and backward launchers (the custom ops call them
    through module globals), delegating to the real ones."""
    calls = {"fwd": 0, "bwd": 0}
    real_fwd, real_bwd = LN.layer_norm_fwd, LN.layer_norm_bwd

    def fwd(*args, **kwargs):
        calls["fwd"] += 1
        return real_fwd(*args, **kwargs)

    def bwd(*args, **kwargs):
        calls["bwd"] += 1
        return real_bwd(*args, **kwargs)

    monkeypatch.setattr(LN, "layer_norm_fwd", fwd)
    monkeypatch.setattr(LN, "layer_norm_bwd", bwd)
    return calls


def make_inputs(shape, dtype, device, has_bias=True, w_dtype=None):
    N = shape[-1]
    w_dtype = w_dtype or dtype
    x = (torch.randn(shape, device=device) * 2 + 0.5).to(dtype)  # nonzero mean
    w = (1 + 0.1 * torch.randn(N, device=device)).to(w_dtype)
    b = torch.randn(N, device=device).to(w_dtype) if has_bias else None
    dy = torch.randn(shape, device=device).to(dtype)
    return x, w, b, dy


def run(fn, x, w, b, dy, **kwargs):
    """y = fn(x, w, b, **kwargs) and the gradients (dx, dw, db) of (y * dy).sum()
    with respect to fresh leaves viewing x, w, b; db is None without a bias."""
    # detach(), not clone(): a view keeps its strides (clone makes non-dense views contiguous)
    x = x.detach().requires_grad_()
    w = w.detach().requires_grad_()
    b = None if b is None else b.detach().requires_grad_()
    y = fn(x, w, b, **kwargs)
    y.backward(dy.to(y.dtype))
    return y.detach(), x.grad, w.grad, None if b is None else b.grad


def run_ref(x, w, b, dy):
    """The float64 reference: layer_norm_ref on double copies, backward of dy.double()."""
    d = lambda t: None if t is None else t.double()
    return run(kernels.layer_norm_ref, d(x), d(w), d(b), d(dy))


def check_3way(outs, outs_torch, refs):
    for name, out, out_torch, ref in zip(("y", "dx", "dw", "db"), outs, outs_torch, refs):
        if ref is None:
            assert out is None and out_torch is None, name
        else:
            assert_close_3way(name, out, out_torch, ref)


# ---------------------------------------------------------------- correctness

@pytest.mark.parametrize("has_bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[-1])
def test_matches_reference(dtype, shape, has_bias, device):
    x, w, b, dy = make_inputs(shape, dtype, device, has_bias)
    outs = run(kernels.layer_norm, x, w, b, dy, backend="triton")
    outs_torch = run(kernels.layer_norm, x, w, b, dy, backend="torch")
    refs = run_ref(x, w, b, dy)
    # shapes, dtypes, finiteness (every element written) and values, output and grads
    check_3way(outs, outs_torch, refs)


def test_eps_is_used(device):
    # a nearly constant row: the result depends on eps
    x = torch.full((4, 64), 3.0, device=device) + 1e-4 * torch.randn(4, 64, device=device)
    w, dy = torch.ones(64, device=device), torch.randn(4, 64, device=device)
    for eps in (1e-5, 1e-2):
        outs = run(kernels.layer_norm, x, w, None, dy, eps=eps, backend="triton")
        outs_torch = run(kernels.layer_norm, x, w, None, dy, eps=eps, backend="torch")
        refs = run(kernels.layer_norm_ref, x.double(), w.double(), None, dy.double(), eps=eps)
        check_3way(outs, outs_torch, refs)


# ---------------------------------------------------------------- mixed dtypes, autocast

@pytest.mark.parametrize("x_dtype", [torch.bfloat16, torch.float16], ids=["x_bf16", "x_fp16"])
def test_mixed_dtypes(x_dtype, device):
    # activations in half precision with fp32 parameters, as a model under autocast has
    x, w, b, dy = make_inputs((6, 256), x_dtype, device, w_dtype=torch.float32)
    outs = run(kernels.layer_norm, x, w, b, dy, backend="triton")
    if device == "cpu":
        outs_torch = run(kernels.layer_norm_ref, x, w, b, dy)  # F.layer_norm takes the mix on CPU
    else:
        # CUDA's F.layer_norm rejects it outside autocast ("expected scalar type BFloat16
        # but found Float"): compare with PyTorch in fp32, rounded to the kernel's dtypes
        y, dx, dw, db = run(kernels.layer_norm_ref, x.float(), w, b, dy.float())
        outs_torch = (y.to(x_dtype), dx.to(x_dtype), dw, db)
    assert outs[0].dtype == outs_torch[0].dtype == x_dtype
    assert outs[2].dtype == outs[3].dtype == torch.float32
    check_3way(outs, outs_torch, run_ref(x, w, b, dy))


@pytest.mark.parametrize("x_dtype", [torch.bfloat16, torch.float32], ids=["x_bf16", "x_fp32"])
def test_autocast(x_dtype, device):
    # under CUDA autocast layer_norm runs (and returns) fp32; CPU autocast leaves it alone
    x, w, b, dy = make_inputs((6, 256), x_dtype, device, w_dtype=torch.float32)

    def under_autocast(fn):
        def f(*args, **kwargs):
            with torch.autocast(device, dtype=torch.bfloat16):
                return fn(*args, **kwargs)
        return f

    outs = run(under_autocast(kernels.layer_norm), x, w, b, dy, backend="triton")
    outs_torch = run(under_autocast(kernels.layer_norm_ref), x, w, b, dy)
    expected = torch.float32 if device == "cuda" else x_dtype
    assert outs[0].dtype == outs_torch[0].dtype == expected
    check_3way(outs, outs_torch, run_ref(x, w, b, dy))


# ---------------------------------------------------------------- strided inputs

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("layout", ["transposed", "every_other_column", "row_slice"])
def test_non_contiguous(layout, dtype, device):
    M, N = 6, 40
    base_dy = torch.randn(M, N, device=device, dtype=dtype)
    if layout == "transposed":      # last dim has stride M
        x = torch.randn(N, M, device=device, dtype=dtype).t()
        dy = base_dy.t().contiguous().t()  # dy strided too
    elif layout == "every_other_column":  # last dim has stride 2
        x = torch.randn(M, 2 * N, device=device, dtype=dtype)[:, ::2]
        dy = base_dy
    else:                           # contiguous columns, rows 2N apart (no copy needed)
        x = torch.randn(M, 2 * N, device=device, dtype=dtype)[:, :N]
        dy = base_dy
    assert x.shape == (M, N) and not x.is_contiguous()
    w = 1 + 0.1 * torch.randn(N, device=device, dtype=dtype)
    b = torch.randn(N, device=device, dtype=dtype)

    strided = run(kernels.layer_norm, x, w, b, dy, backend="triton")
    contiguous = run(kernels.layer_norm, x.contiguous(), w, b, dy.contiguous(), backend="triton")
    for name, s, c in zip(("y", "dx", "dw", "db"), strided, contiguous):
        assert torch.equal(s, c), f"{layout}: {name} differs from the contiguous input's"


def test_non_contiguous_row_stride_not_copied(device):
    # x[:, :N] of a wider tensor is read in place through its row stride
    M, N = 5, 48
    base = torch.randn(M, 2 * N, device=device)
    x = base[:, :N]
    w, b = torch.ones(N, device=device), torch.zeros(N, device=device)
    assert LN._rows(x, N).data_ptr() == x.data_ptr()
    y = kernels.layer_norm(x, w, b, backend="triton")
    torch.testing.assert_close(y, kernels.layer_norm(x.contiguous(), w, b, backend="triton"),
                               rtol=0, atol=0)


# ---------------------------------------------------------------- backend rule

def test_triton_backend_runs_the_kernel(spies, device):
    x, w, b, dy = make_inputs((4, 32), torch.float32, device)
    run(kernels.layer_norm, x, w, b, dy, backend="triton")
    assert spies == {"fwd": 1, "bwd": 1}


def test_torch_backend_does_not(spies, device):
    x, w, b, dy = make_inputs((4, 32), torch.float32, device)
    run(kernels.layer_norm, x, w, b, dy, backend="torch")
    assert spies == {"fwd": 0, "bwd": 0}


def test_auto_uses_triton_where_it_can(spies, device):
    x, w, b, dy = make_inputs((4, 32), torch.float32, device)
    run(kernels.layer_norm, x, w, b, dy, backend="auto")
    assert spies == {"fwd": 1, "bwd": 1}


def test_cpu_without_interpreter_falls_back(spies, monkeypatch, capsys, device):
    if device == "cuda":
        pytest.skip("CUDA tensors never need the interpreter")
    monkeypatch.setattr(backend, "INTERPRET", False)
    x, w, b, _ = make_inputs((4, 32), torch.float32, "cpu")
    y = kernels.layer_norm(x, w, b, backend="auto")
    assert torch.equal(y, F.layer_norm(x, (32,), w, b))
    assert spies["fwd"] == 0
    assert capsys.readouterr().out == ""  # a plain CPU run is not worth a message
    with pytest.raises(RuntimeError, match="CUDA"):
        kernels.layer_norm(x, w, b, backend="triton")


def test_without_triton_falls_back(spies, monkeypatch, device):
    monkeypatch.setattr(backend, "TRITON_AVAILABLE", False)
    x, w, b, _ = make_inputs((4, 32), torch.float32, device)
    y = kernels.layer_norm(x, w, b, backend="auto")
    assert torch.equal(y, F.layer_norm(x, (32,), w, b))
    assert spies["fwd"] == 0
    with pytest.raises(RuntimeError, match="not installed"):
        kernels.layer_norm(x, w, b, backend="triton")


def test_too_wide_falls_back_saying_so_once(spies, monkeypatch, capsys, device):
    monkeypatch.setattr(backend, "_said", set())  # forget earlier messages
    N = LN.MAX_WIDTH + 1
    x, w, b, _ = make_inputs((1, N), torch.float32, device)
    for _ in range(2):
        y = kernels.layer_norm(x, w, b, backend="auto")
        assert torch.equal(y, F.layer_norm(x, (N,), w, b))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "width" in lines[0], lines
    assert spies["fwd"] == 0
    with pytest.raises(RuntimeError, match="width"):
        kernels.layer_norm(x, w, b, backend="triton")


def test_invalid_backend(device):
    x = torch.randn(2, 8, device=device)
    with pytest.raises(ValueError, match="backend"):
        kernels.layer_norm(x, torch.ones(8, device=device), backend="cuda")


def test_float64_auto_uses_torch(spies, device):
    x, w, b, _ = make_inputs((4, 32), torch.float64, device)
    y = kernels.layer_norm(x, w, b, backend="auto")
    assert y.dtype == torch.float64 and torch.equal(y, F.layer_norm(x, (32,), w, b))
    assert spies["fwd"] == 0
    with pytest.raises(RuntimeError, match="dtype"):
        kernels.layer_norm(x, w, b, backend="triton")


def test_imports_without_triton():
    code = (
        "import sys; sys.modules['triton'] = None\n"  # `import triton` now raises ImportError
        "import torch, torch.nn.functional as F\n"
        "import kernels\n"
        "assert kernels.TRITON_AVAILABLE is False\n"
        "x, w = torch.randn(4, 8), torch.ones(8)\n"
        "torch.testing.assert_close(kernels.layer_norm(x, w), F.layer_norm(x, (8,), w), rtol=0, atol=0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


# ---------------------------------------------------------------- torch.compile, determinism, empty

def test_torch_compile_fullgraph(device):
    torch._dynamo.reset()
    x, w, b, dy = make_inputs((8, 96), torch.float32, device)

    def f(x, w, b, dy):
        y = kernels.layer_norm(x, w, b, backend="triton")
        return y, (y * dy).sum()

    compiled = torch.compile(f, fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    results = []
    for fn in (f, compiled):
        xs, ws, bs = (t.detach().clone().requires_grad_() for t in (x, w, b))
        y, loss = fn(xs, ws, bs, dy)
        loss.backward()
        results.append((y.detach(), loss.detach(), xs.grad, ws.grad, bs.grad))
    for name, e, c in zip(("y", "loss", "dx", "dw", "db"), *results):
        torch.testing.assert_close(c, e, msg=lambda m: f"{name}: {m}")
    torch._dynamo.reset()


@pytest.mark.parametrize("shape", [(37, 1000), (300, 64)], ids=["37x1000", "300x64"])
def test_backward_is_deterministic(shape, device):
    x, w, b, dy = make_inputs(shape, torch.float32, device)
    first = run(kernels.layer_norm, x, w, b, dy, backend="triton")
    second = run(kernels.layer_norm, x, w, b, dy, backend="triton")
    for name, a, c in zip(("y", "dx", "dw", "db"), first, second):
        assert torch.equal(a, c), f"{name} differs between two runs"


@pytest.mark.parametrize("backend_name", ["triton", "auto"])
def test_zero_rows(backend_name, device):
    x, w, b, dy = make_inputs((0, 16), torch.float32, device)
    y, dx, dw, db = run(kernels.layer_norm, x, w, b, dy, backend=backend_name)
    assert y.shape == (0, 16) and dx.shape == (0, 16)
    assert torch.equal(dw, torch.zeros(16, device=device))
    assert torch.equal(db, torch.zeros(16, device=device))
