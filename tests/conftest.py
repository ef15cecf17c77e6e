"""
Shared test setup for kernels/: import path, Triton's CPU interpreter where there is
no GPU, the `device` fixture, and the three-way closeness rule every kernel test uses.
"""
import os
import sys
import zlib
import subprocess

import pytest
import torch

# The repo root, so `import kernels`, `import model` work from tests/.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# Without a GPU, run Triton kernels in its CPU interpreter. This must happen before
# anything imports triton or kernels (kernels.backend reads it at import). On a GPU
# machine it stays unset, so the kernels compile and run natively.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_configure(config):
    # noise from Triton's CPU interpreter under numpy >= 1.25, not from our code
    config.addinivalue_line(
        "filterwarnings", "ignore:Conversion of an array with ndim > 0 to a scalar:DeprecationWarning")
    # F.rms_norm's note that a bf16 input with an fp32 weight takes its unfused path
    config.addinivalue_line("filterwarnings", "ignore:Mismatch dtype between input and weight:UserWarning")


# The dtypes every kernel test runs in, and their short test ids.
DTYPES = [torch.float32, torch.bfloat16, torch.float16]
dtype_id = lambda d: str(d).split(".")[-1]


@pytest.fixture(autouse=True)
def seed(request):
    # fresh random inputs per test, reproducible from the test's id
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture(scope="session")
def device():
    return "cuda" if torch.cuda.is_available() else "cpu"


# Tiny Shakespeare: where TINY_SHAKESPEARE says, where data/shakespeare_char/prepare.py downloads it, beside the
# checkout, or the copy in tests/fixtures (karpathy/char-rnn's input.txt, 1.1 MB), so that a clone anywhere runs every
# test without a network
SHAKESPEARE_PLACES = [os.environ.get("TINY_SHAKESPEARE", ""),
                      os.path.join(ROOT, "data", "shakespeare_char", "input.txt"),
                      os.path.join(ROOT, "..", "shared", "data", "tinyshakespeare", "input.txt"),
                      os.path.join(ROOT, "tests", "fixtures", "tinyshakespeare.txt")]
SHAKESPEARE = next((p for p in SHAKESPEARE_PLACES if os.path.isfile(p)),
                   f"no Tiny Shakespeare in {SHAKESPEARE_PLACES} (set TINY_SHAKESPEARE=path/to/input.txt)")


@pytest.fixture(scope="session")
def data_root(tmp_path_factory):
    """Tiny Shakespeare, character level, in a temporary data root (the scripts' tests, which only read it): one a
    test process."""
    root = tmp_path_factory.mktemp("data")
    text = tmp_path_factory.mktemp("text") / "input.txt"
    with open(SHAKESPEARE, encoding="utf-8") as f:
        text.write_text(f.read()[:200_000], encoding="utf-8")
    subprocess.run([sys.executable, "data/shakespeare_char/prepare.py", str(text),
                    f"--out_dir={root}/shakespeare_char"],
                   cwd=ROOT, check=True, capture_output=True)
    return root


def assert_close_3way(name, out, out_torch, ref, atol=0.0):
    """The kernel's result `out` is as close to the float64 reference `ref` as PyTorch's
    own op in the same dtype (`out_torch`) is, give or take a factor 2, plus one unit
    in the last place of out's dtype at the reference's scale (plus `atol`, for a
    reference that is exactly zero where fp32 arithmetic leaves rounding noise)."""
    assert out.shape == out_torch.shape, f"{name}: shape {tuple(out.shape)} != torch's {tuple(out_torch.shape)}"
    assert out.dtype == out_torch.dtype, f"{name}: dtype {out.dtype} != torch's {out_torch.dtype}"
    assert torch.isfinite(out).all(), f"{name}: kernel output has NaN or inf"
    if ref.numel() == 0:
        return
    ref = ref.double()
    err_k = (out.double() - ref).abs().max().item()
    err_t = (out_torch.double() - ref).abs().max().item()
    atol += torch.finfo(out.dtype).eps * ref.abs().max().item()
    assert err_k <= 2 * err_t + atol, (
        f"{name}: kernel error {err_k:.3e} > 2 * torch error {err_t:.3e} + atol {atol:.3e}")


def forward_backward(fn, args, dys, no_grad=()):
    """Run fn(*args) on fresh leaves viewing the tensor args (detach(), not clone(): a view
    keeps its strides) and backpropagate sum(out_i * dy_i) over the outputs. Returns
    (outputs, grads): a tuple of the outputs, and per arg its gradient (None for
    non-tensors and for the indices in no_grad)."""
    leaves = [a.detach().requires_grad_(i not in no_grad) if torch.is_tensor(a) else a
              for i, a in enumerate(args)]
    out = fn(*leaves)
    outs = out if isinstance(out, tuple) else (out,)
    torch.autograd.backward(list(outs), [dy.to(o.dtype) for o, dy in zip(outs, dys)])
    grads = tuple(a.grad if torch.is_tensor(a) and a.requires_grad else None for a in leaves)
    return tuple(o.detach() for o in outs), grads


def double(args):
    """args with every floating tensor in float64 (for the reference run)."""
    return [a.double() if torch.is_tensor(a) and a.is_floating_point() else a for a in args]


def check_3way_all(names, results, results_torch, refs, atol=0.0):
    """assert_close_3way for each named pair of (outputs, grads) from forward_backward;
    None must be None in all three."""
    flat = lambda r: list(r[0]) + list(r[1])
    for name, out, out_torch, ref in zip(names, flat(results), flat(results_torch), flat(refs)):
        if ref is None:
            assert out is None and out_torch is None, f"{name}: expected no gradient"
        else:
            assert_close_3way(name, out, out_torch, ref, atol)


def count_launches(monkeypatch, module):
    """Count the launches of every `_..._kernel` of a kernels/ module: each kernel's
    `run`, which kernel[grid](...) calls, is wrapped for the test. Returns {kernel name: count}."""
    counts = {}
    for name in dir(module):
        if name.startswith("_") and name.endswith("_kernel"):
            kernel, counts[name] = getattr(module, name), 0

            def run(*args, _run=kernel.run, _name=name, **kwargs):
                counts[_name] += 1
                return _run(*args, **kwargs)
            monkeypatch.setattr(kernel, "run", run)
    assert counts, f"{module.__name__} has no kernels"
    return counts
