"""
Tests of kernels.rotary (and rotary_qkv, on a packed projection): the Triton kernel
(forward, and backward as the rotation back) against PyTorch and a float64 reference,
q and k read in place as a strided view of the fused qkv tensor (GQA included), other
strides, argument checks, torch.compile, empty inputs (the backend rule:
test_backend_rule.py).

On a machine without a GPU the kernel runs in Triton's CPU interpreter (conftest.py).
"""
import importlib

import pytest
import torch

import kernels
import model
from conftest import check_3way_all, double, forward_backward, DTYPES, dtype_id

ROT = importlib.import_module("kernels.rotary")  # the module; kernels.rotary is the function

SHAPES = [                 # (B, H, T, D)
    (1, 1, 1, 64),         # one position of one head
    (1, 1, 1, 2),          # the smallest head: one pair
    (2, 3, 5, 6),          # tiny, odd half (D/2 = 3)
    (1, 2, 9, 10),         # odd half 5, not a power of two
    (2, 12, 64, 64),       # GPT-2 small: 12 heads of 64, one full block of positions
    (1, 4, 70, 128),       # head dim 128; T past one 64-position block
    (1, 2, 130, 96),       # three position blocks, the last partial; D/2 = 48
    (1, 1, 3, 1030),       # wider than 1024 columns (D/2 = 515)
]
NAMES = ("y", "dx", "dcos", "dsin")  # cos and sin get no gradient


def tables(D, T, device, start=100):
    """The model's cos, sin (T, D/2) for positions start.. start+T-1 (from 100 on by
    default, so that even T = 1 turns by nonzero angles)."""
    cos, sin = model.rotary_tables(D, start + T, 10000.0)
    return cos[start:].to(device), sin[start:].to(device)


def make_inputs(shape, dtype, device):
    B, H, T, D = shape
    x = torch.randn(shape, device=device).to(dtype)
    dy = torch.randn(shape, device=device).to(dtype)
    return (x, *tables(D, T, device)), dy


def op(backend_name):
    return lambda x, cos, sin: kernels.rotary(x, cos, sin, backend=backend_name)


def run(backend_name, args, dy):
    return forward_backward(op(backend_name), args, [dy], no_grad=(1, 2))


# ---------------------------------------------------------------- correctness

@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_matches_reference(dtype, shape, device):
    args, dy = make_inputs(shape, dtype, device)
    results = run("triton", args, dy)
    results_torch = run("torch", args, dy)
    refs = forward_backward(kernels.rotary_ref, double(args), [dy.double()], no_grad=(1, 2))
    # shapes, dtypes, finiteness (every element written) and values, output and gradient
    check_3way_all(NAMES, results, results_torch, refs)
    (y,), (dx, _, _) = results
    assert y.dtype == dx.dtype == dtype


def test_backward_is_the_rotation_back(device):
    (x, cos, sin), dy = make_inputs((2, 3, 40, 64), torch.float32, device)
    (y,), (dx, _, _) = run("triton", (x, cos, sin), dy)
    # the transpose of a rotation is the rotation by -angle: exactly, as -sin is exact
    assert torch.equal(dx, kernels.rotary(dy, cos, -sin, backend="triton"))
    # and turning back undoes the turn, to fp32 rounding
    torch.testing.assert_close(kernels.rotary(y, cos, -sin, backend="triton"), x, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- strided inputs

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("n_kv_head", [4, 2, 1], ids=["mha", "gqa", "mqa"])
def test_qkv_view(n_kv_head, dtype, device):
    # q and k as the model makes them: heads of the fused qkv projection, (B, H + Hkv, T, D)
    # with strides (T * W, D, W, 1), W = (H + 2 Hkv) D, rotated in place by one call
    B, T, H, D = 2, 11, 4, 16
    heads = H + n_kv_head
    qkv = torch.randn(B, T, (H + 2 * n_kv_head) * D, device=device).to(dtype)
    cos, sin = model.rotary_tables(D, 32, 10000.0)
    cos, sin = cos[:T].to(device), sin[:T].to(device)
    dy = torch.randn(B, heads, T, D, device=device).to(dtype)

    leaf = qkv.detach().requires_grad_()
    x = leaf.view(B, T, H + 2 * n_kv_head, D)[:, :, :heads].transpose(1, 2)
    assert x.shape == (B, heads, T, D) and not x.is_contiguous() and x.stride(-1) == 1
    y = kernels.rotary(x, cos, sin, backend="triton")
    y.backward(dy)

    (y_c,), (dx_c, _, _) = run("triton", (x.detach().contiguous(), cos, sin), dy)
    assert y.is_contiguous() and y.dtype == dtype
    assert torch.equal(y.detach(), y_c)
    dqkv = leaf.grad.view(B, T, H + 2 * n_kv_head, D)
    assert torch.equal(dqkv[:, :, :heads].transpose(1, 2), dx_c)
    assert torch.equal(dqkv[:, :, heads:], torch.zeros_like(dqkv[:, :, heads:]))  # v untouched


@pytest.mark.parametrize("layout", ["heads_transposed", "last_dim_strided", "sliced"])
def test_non_contiguous(layout, device):
    B, H, T, D = 2, 3, 10, 12
    if layout == "heads_transposed":    # (B, T, H, D) storage
        x = torch.randn(B, T, H, D, device=device).transpose(1, 2)
        dy = torch.randn(B, T, H, D, device=device).transpose(1, 2)
    elif layout == "last_dim_strided":  # D and T swapped in storage: last dim stride T
        x = torch.randn(B, H, D, T, device=device).transpose(2, 3)
        dy = torch.randn(B, H, D, T, device=device).transpose(2, 3)
    else:                               # an offset and odd strides in every dim, last dim 1
        x = torch.randn(B + 1, H + 2, T + 3, D + 5, device=device)[1:, 2:, 3:, 5:]
        dy = torch.randn(B + 1, H + 2, T + 3, D + 5, device=device)[1:, 2:, 3:, 5:]
    assert x.shape == dy.shape == (B, H, T, D) and not x.is_contiguous()
    cos, sin = tables(D, T, device)
    strided = run("triton", (x, cos, sin), dy)
    contiguous = run("triton", (x.contiguous(), cos, sin), dy.contiguous())
    for name, s, c in zip(NAMES, strided[0] + strided[1], contiguous[0] + contiguous[1]):
        assert (s is None and c is None) or torch.equal(s, c), f"{layout}: {name} differs from the contiguous input's"


def test_strided_cos_sin(device):
    # the tables as a column slice of wider ones: the kernel must not assume their strides
    (x, cos, sin), dy = make_inputs((1, 2, 7, 8), torch.float32, device)
    wide_cos = torch.cat((cos, torch.randn_like(cos)), dim=1)[:, :4]
    wide_sin = torch.cat((sin, torch.randn_like(sin)), dim=1)[:, :4]
    assert not wide_cos.is_contiguous()
    y = kernels.rotary(x, wide_cos, wide_sin, backend="triton")
    assert torch.equal(y, kernels.rotary(x, cos, sin, backend="triton"))


# ---------------------------------------------------------------- argument checks

@pytest.mark.parametrize("backend_name", ["triton", "auto", "torch"])
def test_cos_sin_with_grad_raise(backend_name, device):
    (x, cos, sin), _ = make_inputs((1, 2, 5, 8), torch.float32, device)
    with pytest.raises(ValueError, match="cos and sin"):
        kernels.rotary(x, cos.requires_grad_(), sin, backend=backend_name)
    with pytest.raises(ValueError, match="cos and sin"):
        kernels.rotary(x, cos.detach(), sin.requires_grad_(), backend=backend_name)


@pytest.mark.parametrize("backend_name", ["triton", "auto"])
@pytest.mark.parametrize("bad", ["T+1", "D", "one_row", "sin_only"])
def test_wrong_table_shape_raises(bad, backend_name, device):
    (x, cos, sin), _ = make_inputs((1, 2, 5, 8), torch.float32, device)
    if bad == "T+1":
        cos, sin = tables(8, 6, device)
    elif bad == "D":
        cos, sin = torch.cat((cos, cos), 1), torch.cat((sin, sin), 1)
    elif bad == "one_row":  # would broadcast in PyTorch
        cos, sin = cos[:1], sin[:1]
    else:
        sin = sin[:4]
    with pytest.raises(ValueError, match="cos and sin must be"):
        kernels.rotary(x, cos, sin, backend=backend_name)


@pytest.mark.parametrize("backend_name", ["triton", "auto"])
def test_odd_head_dim_raises(backend_name, device):
    x = torch.randn(1, 2, 5, 7, device=device)
    cos, sin = torch.randn(5, 3, device=device), torch.randn(5, 3, device=device)
    with pytest.raises(ValueError, match="D even"):
        kernels.rotary(x, cos, sin, backend=backend_name)


@pytest.mark.parametrize("backend_name", ["triton", "auto"])
def test_not_4d_raises(backend_name, device):
    cos, sin = tables(8, 5, device)
    with pytest.raises(ValueError, match=r"\(B, H, T, D\)"):
        kernels.rotary(torch.randn(2, 5, 8, device=device), cos, sin, backend=backend_name)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("n_kv_head", [4, 2, 1], ids=["mha", "gqa", "mqa"])
def test_packed_qkv(n_kv_head, dtype, device):
    """rotary_qkv: q and k heads of one (B, T, H + 2 Hkv, D) projection turned, v copied bit
    for bit, into a new tensor of that layout; the gradient the same way back, against
    PyTorch and float64 (three-way)."""
    B, T, H, D = 2, 37, 4, 16
    n_rot = H + n_kv_head
    qkv = torch.randn(B, T, H + 2 * n_kv_head, D, device=device).to(dtype)
    dy = torch.randn_like(qkv)
    cos, sin = tables(D, T, device)
    fn = lambda be: lambda t, c, s: kernels.rotary_qkv(t, n_rot, c, s, backend=be)
    out = forward_backward(fn("triton"), [qkv, cos, sin], [dy], no_grad=(1, 2))
    check_3way_all(NAMES, out, forward_backward(fn("torch"), [qkv, cos, sin], [dy], no_grad=(1, 2)),
                   forward_backward(fn("torch"), double([qkv, cos, sin]), [dy.double()], no_grad=(1, 2)))
    (y,), (dqkv, _, _) = out
    assert y.is_contiguous() and dqkv.is_contiguous()
    assert torch.equal(y[:, :, n_rot:], qkv[:, :, n_rot:]) and torch.equal(dqkv[:, :, n_rot:], dy[:, :, n_rot:])
    with pytest.raises(ValueError, match="n_rot"):
        kernels.rotary_qkv(qkv, qkv.shape[2] + 1, cos, sin, backend="triton")


# ---------------------------------------------------------------- torch.compile, empty

@pytest.mark.parametrize("packed", [False, True], ids=["x", "qkv"])
def test_torch_compile_fullgraph(packed, device):
    torch._dynamo.reset()
    (x, cos, sin), dy = make_inputs((2, 3, 10, 16), torch.float32, device)
    if packed:  # (B, T, 3 heads, D), two of them turned
        x, dy = x.transpose(1, 2).contiguous(), dy.transpose(1, 2).contiguous()

    def f(x, cos, sin, dy):
        y = (kernels.rotary_qkv(x, 2, cos, sin, backend="triton") if packed
             else kernels.rotary(x, cos, sin, backend="triton"))
        return y, (y * dy).sum()

    compiled = torch.compile(f, fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    results = []
    for fn in (f, compiled):
        xs = x.detach().clone().requires_grad_()
        y, loss = fn(xs, cos, sin, dy)
        loss.backward()
        results.append((y.detach(), loss.detach(), xs.grad))
    for name, e, c in zip(("y", "loss", "dx"), *results):
        torch.testing.assert_close(c, e, msg=lambda m: f"{name}: {m}")
    torch._dynamo.reset()


@pytest.mark.parametrize("shape", [(0, 2, 8, 16), (2, 0, 8, 16), (2, 2, 0, 16)],
                         ids=["no_batch", "no_heads", "no_positions"])
def test_empty(shape, device):
    args, dy = make_inputs(shape, torch.float32, device)
    (y,), (dx, _, _) = run("triton", args, dy)
    assert y.shape == dx.shape == shape
