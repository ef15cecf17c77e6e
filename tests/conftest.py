"""
Shared test setup for kernels/: import path, Triton's CPU interpreter where there is
no GPU, the `device` fixture, and the three-way closeness rule every kernel test uses.
"""
import os
import sys

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


@pytest.fixture(scope="session")
def device():
    return "cuda" if torch.cuda.is_available() else "cpu"


def assert_close_3way(name, out, out_torch, ref):
    """The kernel's result `out` is as close to the float64 reference `ref` as PyTorch's
    own op in the same dtype (`out_torch`) is, give or take a factor 2, plus one unit
    in the last place of out's dtype at the reference's scale."""
    assert out.shape == out_torch.shape, f"{name}: shape {tuple(out.shape)} != torch's {tuple(out_torch.shape)}"
    assert out.dtype == out_torch.dtype, f"{name}: dtype {out.dtype} != torch's {out_torch.dtype}"
    assert torch.isfinite(out).all(), f"{name}: kernel output has NaN or inf"
    if ref.numel() == 0:
        return
    ref = ref.double()
    err_k = (out.double() - ref).abs().max().item()
    err_t = (out_torch.double() - ref).abs().max().item()
    atol = torch.finfo(out.dtype).eps * ref.abs().max().item()
    assert err_k <= 2 * err_t + atol, (
        f"{name}: kernel error {err_k:.3e} > 2 * torch error {err_t:.3e} + atol {atol:.3e}")
