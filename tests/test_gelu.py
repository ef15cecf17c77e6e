"""
Tests of kernels.gelu: the Triton kernels (forward and backward, erf and tanh forms,
with and without the fused bias) against PyTorch and a float64 reference, mixed
dtypes as under autocast, strided inputs, argument checks, deterministic bias
gradients, torch.compile, empty inputs (the backend rule: test_backend_rule.py).

On a machine without a GPU the kernels run in Triton's CPU interpreter (conftest.py).
"""
import importlib

import pytest
import torch

import kernels
import kernels.backend as backend
from conftest import check_3way_all, double, forward_backward, DTYPES, dtype_id

GE = importlib.import_module("kernels.gelu")  # the module; kernels.gelu is the function

SHAPES = [
    (1, 768),       # one row
    (3, 7),         # tiny, odd
    (37, 1000),     # neither power of two; with a bias, backward's last program runs past M
    (4, 3000),      # three 1024-column blocks, the last partial
    (3, 4097),      # one column past four blocks
    (16, 3072),     # GPT-2's MLP width (few rows, for the interpreter)
    (2, 5, 384),    # 3-D input
]
NAMES = ("y", "dx", "dbias")


def make_inputs(shape, dtype, device, has_bias=True, bias_dtype=None):
    x = (torch.randn(shape, device=device) * 2).to(dtype)  # the bend and both tails
    bias = (0.5 * torch.randn(shape[-1], device=device)).to(bias_dtype or dtype) if has_bias else None
    dy = torch.randn(shape, device=device).to(dtype)
    return (x, bias), dy


def op(backend_name, approximate):
    return lambda x, bias: kernels.gelu(x, bias, approximate=approximate, backend=backend_name)


def run(backend_name, args, dy, approximate="none"):
    return forward_backward(op(backend_name, approximate), args, [dy])


def run_ref(args, dy, approximate="none"):
    return forward_backward(lambda x, bias: kernels.gelu_ref(x, bias, approximate), double(args), [dy.double()])


# ---------------------------------------------------------------- correctness

@pytest.mark.parametrize("has_bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_matches_reference(dtype, shape, approximate, has_bias, device):
    args, dy = make_inputs(shape, dtype, device, has_bias)
    results = run("triton", args, dy, approximate)
    results_torch = run("torch", args, dy, approximate)
    # shapes, dtypes, finiteness (every element written) and values, output and grads
    check_3way_all(NAMES, results, results_torch, run_ref(args, dy, approximate))


# ---------------------------------------------------------------- backward with the output made again

@pytest.mark.parametrize("has_bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("bias_dtype", [None, torch.float32], ids=["", "fp32bias"])  # fp32: as under autocast
def test_backward_gives_the_output_again(dtype, shape, approximate, has_bias, bias_dtype, device):
    """gelu_backward (model.py's recompute='activation'): its output made again and its gradients
    are as accurate as the forward's and the plain backward's, by the three-way rule. PyTorch's
    are the same bits; the Triton kernel with WITH_Y is another compiled kernel, whose arithmetic
    the compiler may fuse differently (on the GPU it did: dx an fp32 unit apart)."""
    (x, bias), dy = make_inputs(shape, dtype, device, has_bias, bias_dtype)
    results_torch, ref = run("torch", (x, bias), dy, approximate), run_ref((x, bias), dy, approximate)
    for backend_name in ("triton", "torch"):
        dx, dbias, y = kernels.gelu_backward(dy, x, bias, approximate, backend=backend_name)
        check_3way_all(NAMES, ((y,), (dx, dbias)), results_torch, ref)
    # the loop's last results are PyTorch's
    assert all(torch.equal(a, b) for a, b in zip((y, dx, dbias), results_torch[0] + results_torch[1])
               if a is not None or b is not None)


# ---------------------------------------------------------------- mixed dtypes

@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("x_dtype", [torch.bfloat16, torch.float16], ids=["x_bf16", "x_fp16"])
def test_mixed_dtypes(x_dtype, approximate, device):
    # half-precision activations with the Linear's fp32 bias, as under autocast
    args, dy = make_inputs((37, 1100), x_dtype, device, bias_dtype=torch.float32)
    results = run("triton", args, dy, approximate)
    (y,), (dx, dbias) = results
    assert y.dtype == dx.dtype == x_dtype and dbias.dtype == torch.float32
    (y_t,), (dx_t, dbias_t) = run("torch", args, dy, approximate)
    assert y_t.dtype == dx_t.dtype == x_dtype and dbias_t.dtype == torch.float32
    # PyTorch in fp32, rounded to the kernel's dtypes
    x, bias = args
    (y32,), (dx32, dbias32) = run("torch", (x.float(), bias), dy.float(), approximate)
    results_torch = ((y32.to(x_dtype),), (dx32.to(x_dtype), dbias32))
    check_3way_all(NAMES, results, results_torch, run_ref(args, dy, approximate))


# ---------------------------------------------------------------- strided inputs

@pytest.mark.parametrize("layout", ["row_slice", "transposed", "strided_dy"])
def test_non_contiguous(layout, device):
    M, N = 6, 40
    x, dy = torch.randn(M, N, device=device), torch.randn(M, N, device=device)
    bias = torch.randn(N, device=device)
    if layout == "row_slice":     # contiguous columns, rows 2N apart: read in place
        x = torch.randn(M, 2 * N, device=device)[:, :N]
        assert backend.as_rows(x).data_ptr() == x.data_ptr()
    elif layout == "transposed":  # last dim stride M: copied
        x = x.t().contiguous().t()
    else:                         # the incoming gradient a transposed view
        dy = dy.t().contiguous().t()
    assert not (x.is_contiguous() and dy.is_contiguous())
    strided = run("triton", (x, bias), dy)
    contiguous = run("triton", (x.contiguous(), bias), dy.contiguous())
    for name, s, c in zip(NAMES, strided[0] + strided[1], contiguous[0] + contiguous[1]):
        if name == "dbias":  # a sum over rows: on a GPU a row stride divisible by 16 may load
            # wider vectors, which changes how the sum is split among threads (rounding only)
            torch.testing.assert_close(s, c, msg=lambda m: f"{layout}: {name}: {m}")
        else:
            assert torch.equal(s, c), f"{layout}: {name} differs from the contiguous input's"


# ---------------------------------------------------------------- argument checks

@pytest.mark.parametrize("backend_name", ["triton", "auto"])
@pytest.mark.parametrize("approximate", ["tanh ", "erf", "None", None])
def test_invalid_approximate_raises(approximate, backend_name, device):
    (x, bias), _ = make_inputs((4, 8), torch.float32, device)
    with pytest.raises(ValueError, match="approximate"):
        kernels.gelu(x, bias, approximate=approximate, backend=backend_name)


@pytest.mark.parametrize("backend_name", ["triton", "auto"])
@pytest.mark.parametrize("bias_shape", [(9,), (1,), (1, 8), (4, 8), ()],
                         ids=["9", "1", "1x8", "4x8", "scalar"])
def test_bias_of_wrong_shape_raises(bias_shape, backend_name, device):
    x = torch.randn(4, 8, device=device)
    with pytest.raises(ValueError, match="bias must have shape"):
        kernels.gelu(x, torch.randn(bias_shape, device=device), backend=backend_name)


# ---------------------------------------------------------------- determinism

@pytest.mark.parametrize("shape", [(300, 64), (37, 3000)], ids=["300x64", "37x3000"])
def test_backward_is_deterministic(shape, device):
    args, dy = make_inputs(shape, torch.float32, device)
    first = run("triton", args, dy)
    second = run("triton", args, dy)
    for name, a, c in zip(NAMES, first[0] + first[1], second[0] + second[1]):
        assert torch.equal(a, c), f"{name} differs between two runs"


# ---------------------------------------------------------------- torch.compile, empty

@pytest.mark.parametrize("approximate,has_bias", [("none", True), ("tanh", False)], ids=["none-bias", "tanh-nobias"])
def test_torch_compile_fullgraph(approximate, has_bias, device):
    torch._dynamo.reset()
    (x, bias), dy = make_inputs((8, 96), torch.float32, device, has_bias)

    def f(x, bias, dy):
        y = kernels.gelu(x, bias, approximate=approximate, backend="triton")
        return y, (y * dy).sum()

    compiled = torch.compile(f, fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    results = []
    for fn in (f, compiled):
        xs = x.detach().clone().requires_grad_()
        bs = bias.detach().clone().requires_grad_() if has_bias else None
        y, loss = fn(xs, bs, dy)
        loss.backward()
        results.append((y.detach(), loss.detach(), xs.grad, bs.grad if has_bias else None))
    for name, e, c in zip(("y", "loss", "dx", "dbias"), *results):
        if e is None:
            assert c is None, name
        else:
            torch.testing.assert_close(c, e, msg=lambda m: f"{name}: {m}")
    torch._dynamo.reset()


def test_scalar(device):
    """A 0-d x, as F.gelu takes it: one row of one."""
    (x, _), dy = make_inputs((), torch.float32, device, has_bias=False)
    ((y,), (dx, _)), ((y_ref,), (dx_ref, _)) = run("triton", (x, None), dy), run_ref((x, None), dy)
    assert y.shape == dx.shape == ()
    torch.testing.assert_close(y, y_ref.float())
    torch.testing.assert_close(dx, dx_ref.float())


@pytest.mark.parametrize("has_bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("shape", [(0, 16), (2, 0, 16), (4, 0)], ids=["0x16", "2x0x16", "4x0"])
def test_empty(shape, has_bias, device):
    args, dy = make_inputs(shape, torch.float32, device, has_bias)
    (y,), (dx, dbias) = run("triton", args, dy)
    assert y.shape == dx.shape == shape
    if has_bias:
        assert torch.equal(dbias, torch.zeros(shape[-1], device=device))
    else:
        assert dbias is None
