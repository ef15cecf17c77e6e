"""kernels/rowwise_fp8.py (the row-wise e4m3 cast) and the products that read it (kernels/linear.py's
Fp8LinearOfCopy), the latter against torchao's own row-wise fp8 linear (recipe 'rowwise_with_gw_hp': the same
casts of x and W forward and of dy, dW in high precision; its dx reads W with one scale for the tensor, where ours
has one per input channel, and sums without fast accumulation)."""
import importlib

import pytest
import torch

from kernels.linear import Fp8LinearOfCopy
from kernels.rowwise_fp8 import E4M3, rowwise_fp8, rowwise_fp8_ref
from conftest import DTYPES, dtype_id, assert_close_3way, count_launches, forward_backward

rowwise = importlib.import_module("kernels.rowwise_fp8")  # the module: the package's kernels.rowwise_fp8 is the op

# one row, one column, not powers of two, wider than 4096 (one row a program), the model's widths
SHAPES = [(1, 16), (5, 1), (37, 768), (12, 2304), (3, 3072), (7, 3000), (2, 5000), (64, 384)]


def draw(shape, dtype, device):
    """Rows of different magnitudes (2^-12 to 2^12) and signs, one of them zeros where there are several."""
    x = torch.randn(shape, device=device) * torch.logspace(-12, 12, shape[0], base=2, device=device)[:, None]
    if shape[0] > 2:
        x[1] = 0
    return x.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cast_matches_reference_bit_for_bit(shape, dtype, device):
    """The kernel's e4m3 rows and scales are the PyTorch reference's, bit for bit (one rounding: the cast)."""
    x = draw(shape, dtype, device)
    x8, s = rowwise_fp8(x, backend='triton')
    r8, rs = rowwise_fp8_ref(x)
    assert x8.dtype == E4M3 and x8.shape == x.shape and x8.is_contiguous() and s.shape == (shape[0], 1)
    assert torch.equal(x8.view(torch.uint8), r8.view(torch.uint8)) and torch.equal(s, rs)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cast_against_float64(shape, dtype, device):
    """x8 * s is x to within half a unit of e4m3 (3 mantissa bits: 2^-4 of |x|, or half the smallest subnormal's
    2^-9 spacing times s); each scale is a power of two, and maps the row's largest entry into (224, 448]."""
    x = draw(shape, dtype, device)
    x8, s = rowwise_fp8(x, backend='triton')
    s64, x64 = s.double(), x.double()
    err = (x8.double() * s64 - x64).abs()
    assert (err <= x64.abs() * 2.0 ** -4 + s64 * 2.0 ** -10).all()
    assert torch.equal(torch.frexp(s)[0], torch.full_like(s, 0.5))  # mantissa 1/2: a power of two
    top = x64.abs().amax(1, keepdim=True) / s64
    nonzero = x64.abs().amax(1, keepdim=True) > 0
    assert ((top > 224) & (top <= 448) | ~nonzero).all()
    assert (x8.float()[~nonzero.squeeze(1)] == 0).all()


def test_cast_keeps_nan_and_inf_poisoning(device):
    """A NaN entry stays NaN, its row scaled by the rest; an infinite entry makes its row's scale infinite. The
    kernel is the reference's bit for bit there too, and a product that reads such a row comes out NaN."""
    x = torch.randn(4, 48, device=device).to(torch.bfloat16)
    x[0, 3], x[1, 5], x[2, 7] = float('nan'), float('inf'), -float('inf')
    x8, s = rowwise_fp8(x, backend='triton')
    r8, rs = rowwise_fp8_ref(x)
    assert torch.equal(x8.view(torch.uint8), r8.view(torch.uint8)) and torch.equal(s, rs)
    assert x8[0, 3].float().isnan() and torch.isfinite(s[0]) and torch.isinf(s[1:3]).all() and torch.isfinite(s[3])
    copy = torch.randn(32, 48, device=device).to(torch.bfloat16)
    y = Fp8LinearOfCopy.apply(x, copy.float(), copy, None)
    assert y[:3].isnan().all() and torch.isfinite(y[3]).all()


def test_cast_reads_rows_of_a_wider_tensor(device):
    """Rows stride_x apart (a slice of a wider tensor): the same bits as the contiguous copy's; columns that are not
    contiguous are refused."""
    wide = torch.randn(9, 1000, device=device, dtype=torch.bfloat16)
    x = wide[:, 100:868]
    assert torch.equal(rowwise_fp8(x, backend='triton')[0].view(torch.uint8),
                       rowwise_fp8(x.contiguous(), backend='triton')[0].view(torch.uint8))
    with pytest.raises(ValueError, match="contiguous columns"):
        rowwise_fp8(wide.t(), backend='triton')


def test_cast_backend_rule(device, monkeypatch, capsys):
    """backend='torch' is the reference; rows wider than the kernel holds go to PyTorch with one printed line."""
    counts = count_launches(monkeypatch, rowwise)
    x = torch.randn(4, 64, device=device)
    rowwise_fp8(x, backend='torch')
    assert counts['_rowwise_fp8_kernel'] == 0
    rowwise_fp8(x, backend='triton')
    assert counts['_rowwise_fp8_kernel'] == 1
    wide = torch.randn(2, rowwise.MAX_WIDTH + 16, device=device)
    assert torch.equal(rowwise_fp8(wide)[1], rowwise_fp8_ref(wide)[1]) and counts['_rowwise_fp8_kernel'] == 1
    assert f"wider than {rowwise.MAX_WIDTH}" in capsys.readouterr().out


def test_cast_refuses_rows_of_width_zero(device):
    """Rows of no elements have no maximum to scale by (the reference's amax raises too)."""
    with pytest.raises(ValueError, match="width 0"):
        rowwise_fp8(torch.randn(4, 0, device=device), backend='triton')


def torchao_linear(weight, bias):
    """torchao's Float8Linear of recipe 'rowwise_with_gw_hp' holding weight and bias (in their dtype)."""
    float8 = pytest.importorskip("torchao.float8", reason="requirements-test.txt's torchao is not installed here")
    linear = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None,
                             device=weight.device, dtype=weight.dtype)
    with torch.no_grad():
        linear.weight.copy_(weight)
        if bias is not None:
            linear.bias.copy_(bias)
    config = float8.Float8LinearConfig.from_recipe_name("rowwise_with_gw_hp")
    return float8.convert_to_float8_training(torch.nn.Sequential(linear), config=config)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
@pytest.mark.parametrize("rows, width, out, bias", [
    (1, 16, 16, False), (37, 64, 48, True), (130, 768, 2304, True), (96, 3072, 768, True), (64, 384, 1536, False)],
    ids=str)
def test_fp8_product_against_torchao(rows, width, out, bias, dtype, device):
    """y, dx, dW and db of the fp8 product reading a copy in dtype (the fp32 weight's, as AdamW keeps it), against
    float64, as close as torchao's row-wise fp8 linear on the same copy is (its dW rounded to dtype, ours summed in
    fp32 and written in the weight's dtype)."""
    weight = torch.randn(out, width, device=device) / width ** 0.5
    copy = weight.to(dtype)
    b = torch.randn(out, device=device) if bias else None
    x = torch.randn(2, rows, width, device=device).to(dtype)
    dy = torch.randn(2, rows, out, device=device).to(dtype)

    (y,), (dx, dw, _, db) = forward_backward(Fp8LinearOfCopy.apply, [x, weight, copy, b], [dy], no_grad=(2,))
    assert y.dtype == dtype and dw.dtype == torch.float32

    theirs = torchao_linear(copy, None if b is None else b.to(dtype))
    (yt,), (dxt,) = forward_backward(theirs, [x], [dy])

    x64, c64, dy64 = x.double(), copy.double(), dy.double()
    y64 = x64 @ c64.t() + (0 if b is None else b.to(dtype).double())
    assert_close_3way("y", y, yt, y64)
    assert_close_3way("dx", dx, dxt, dy64 @ c64)
    dw64 = dy64.flatten(0, 1).t() @ x64.flatten(0, 1)
    assert_close_3way("dW", dw, theirs[0].weight.grad.float(), dw64)
    if b is not None:
        assert_close_3way("db", db, theirs[0].bias.grad.float(), dy64.sum((0, 1)))


def test_fp8_product_takes_strided_inputs(device):
    """x a slice of a wider tensor and dy a broadcast (the gradient of y.sum()): the same results as from their
    contiguous copies."""
    weight = torch.randn(32, 48, device=device) / 7
    copy = weight.to(torch.bfloat16)
    wide = torch.randn(3, 5, 64, device=device).to(torch.bfloat16)
    results = []
    for x, dy in [(wide[..., 8:56], None), (wide[..., 8:56].contiguous(), torch.ones(3, 5, 32, device=device))]:
        x, w = x.detach().requires_grad_(), weight.clone().requires_grad_()
        y = Fp8LinearOfCopy.apply(x, w, copy, None)
        y.sum().backward() if dy is None else y.backward(dy.to(y.dtype))
        results.append((y, x.grad, w.grad))
    for a, b in zip(*results):
        assert torch.equal(a, b)


def test_fp8_product_of_no_rows(device):
    """A batch of no rows: y of no rows, dx of no rows, dW and db zeros."""
    weight = torch.randn(32, 48, device=device)
    x = torch.randn(2, 0, 48, device=device).to(torch.bfloat16).requires_grad_()
    w, b = weight.clone().requires_grad_(), torch.randn(32, device=device).requires_grad_()
    y = Fp8LinearOfCopy.apply(x, w, weight.to(torch.bfloat16), b)
    assert y.shape == (2, 0, 32)
    y.backward(torch.ones_like(y))
    assert x.grad.shape == x.shape and not w.grad.any() and not b.grad.any()
