"""
Tests of kernels.swiglu: the Triton kernels (forward and backward) against PyTorch
and a float64 reference, x = [gate, up] read in place with any row stride, the
gradient written whole in x's layout, argument checks, torch.compile, empty inputs
(the backend rule: test_backend_rule.py).

On a machine without a GPU the kernels run in Triton's CPU interpreter (conftest.py).
"""
import pytest
import torch

import kernels
import kernels.backend as backend
from conftest import check_3way_all, double, forward_backward, DTYPES, dtype_id

SHAPES = [          # y's shape; x has twice its last dim
    (1, 768),       # one row
    (3, 7),         # tiny, odd
    (37, 1000),     # neither power of two
    (4, 3000),      # three 1024-column blocks, the last partial
    (3, 4097),      # one column past four blocks
    (16, 2048),     # the LLaMA-style hidden width for n_embd 768
    (64, 3072),     # GPT-2's MLP width
    (2, 5, 384),    # 3-D input
]
NAMES = ("y", "dx")


def make_inputs(shape, dtype, device):
    gate = torch.randn(shape, device=device) * 2  # silu's bend and both tails
    x = torch.cat((gate, torch.randn(shape, device=device)), dim=-1).to(dtype)
    dy = torch.randn(shape, device=device).to(dtype)
    return x, dy


def run(backend_name, x, dy):
    return forward_backward(lambda x: kernels.swiglu(x, backend=backend_name), [x], [dy])


def run_ref(x, dy):
    return forward_backward(kernels.swiglu_ref, double([x]), [dy.double()])


# ---------------------------------------------------------------- correctness

@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_matches_reference(dtype, shape, device):
    x, dy = make_inputs(shape, dtype, device)
    # shapes, dtypes, finiteness (every element written) and values, output and gradient
    check_3way_all(NAMES, run("triton", x, dy), run("torch", x, dy), run_ref(x, dy))


# ---------------------------------------------------------------- backward with the output made again

@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_backward_gives_the_output_again(dtype, shape, device):
    """swiglu_backward (model.py's recompute='activation'): its output made again and its gradient
    are as accurate as the forward's and the plain backward's, by the three-way rule. PyTorch's
    are the same bits; the Triton kernel with WITH_Y is another compiled kernel."""
    x, dy = make_inputs(shape, dtype, device)
    results_torch, ref = run("torch", x, dy), run_ref(x, dy)
    for backend_name in ("triton", "torch"):
        dx, y = kernels.swiglu_backward(dy, x, backend=backend_name)
        check_3way_all(NAMES, ((y,), (dx,)), results_torch, ref)
    # the loop's last results are PyTorch's
    assert torch.equal(y, results_torch[0][0]) and torch.equal(dx, results_torch[1][0])


# ---------------------------------------------------------------- strided inputs

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(5, 1500), (2, 3, 96)], ids=["5x1500", "2x3x96"])
def test_row_strided_x_is_read_in_place(shape, dtype, device):
    """x a row-strided view (the first 2N columns of a wider tensor): read in place, the same bits as
    a contiguous x; y and the gradient come out contiguous."""
    *lead, N = shape
    wide = torch.randn(*lead, 2 * N + 5, device=device).to(dtype)
    x = wide[..., :2 * N]
    dy = torch.randn(shape, device=device).to(dtype)
    assert not x.is_contiguous() and x.stride(-1) == 1
    assert backend.as_rows(x).data_ptr() == x.data_ptr()  # no copy

    strided, contiguous = run("triton", x, dy), run("triton", x.contiguous(), dy)
    for name, s, c in zip(NAMES, strided[0] + strided[1], contiguous[0] + contiguous[1]):
        assert torch.equal(s, c), f"{name} differs from the contiguous input's"
        assert s.is_contiguous()


@pytest.mark.parametrize("layout", ["transposed", "every_other_column", "strided_dy"])
def test_other_strides(layout, device):
    M, N = 6, 40
    x, dy = torch.randn(M, 2 * N, device=device), torch.randn(M, N, device=device)
    if layout == "transposed":            # last dim stride M: copied
        x = x.t().contiguous().t()
    elif layout == "every_other_column":  # last dim stride 2: copied
        x = torch.stack((x, torch.randn_like(x)), dim=-1).flatten(-2)[:, ::2]
    else:                                 # the incoming gradient itself a transposed view
        dy = dy.t().contiguous().t()
    assert not (x.is_contiguous() and dy.is_contiguous())
    strided, contiguous = run("triton", x, dy), run("triton", x.contiguous(), dy.contiguous())
    for name, s, c in zip(NAMES, strided[0] + strided[1], contiguous[0] + contiguous[1]):
        assert torch.equal(s, c), f"{layout}: {name} differs from the contiguous inputs'"


# ---------------------------------------------------------------- argument checks

def test_odd_width_and_unfitting_gradient_raise(device):
    with pytest.raises(ValueError, match="even last dim"):
        kernels.swiglu(torch.randn(4, 9, device=device), backend="triton")
    x = torch.randn(4, 16, device=device)
    for dy in (torch.randn(4, 16, device=device), torch.randn(4, 7, device=device)):
        with pytest.raises(ValueError, match="half its last dim"):
            kernels.swiglu_backward(dy, x, backend="triton")


# ---------------------------------------------------------------- torch.compile, empty

def test_torch_compile_fullgraph(device):
    torch._dynamo.reset()
    x, dy = make_inputs((8, 96), torch.float32, device)

    def f(x, dy):
        y = kernels.swiglu(x, backend="triton")
        return y, (y * dy).sum()

    compiled = torch.compile(f, fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    results = []
    for fn in (f, compiled):
        leaf = x.detach().clone().requires_grad_()
        y, loss = fn(leaf, dy)
        loss.backward()
        results.append((y.detach(), loss.detach(), leaf.grad))
    for name, e, c in zip(("y", "loss", "dx"), *results):
        torch.testing.assert_close(c, e, msg=lambda m: f"{name}: {m}")
    torch._dynamo.reset()


@pytest.mark.parametrize("shape", [(0, 16), (2, 0, 16)], ids=["0x16", "2x0x16"])
def test_zero_rows(shape, device):
    x, dy = make_inputs(shape, torch.float32, device)
    (y,), (dx,) = run("triton", x, dy)
    assert y.shape == shape and dx.shape == x.shape
