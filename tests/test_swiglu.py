"""
Tests of kernels.swiglu: the Triton kernels (forward and backward) against PyTorch
and a float64 reference, gate and up read in place as the two halves of one tensor,
mixed dtypes, argument checks, torch.compile, empty inputs (the backend rule:
test_backend_rule.py).

On a machine without a GPU the kernels run in Triton's CPU interpreter (conftest.py).
"""
import importlib

import pytest
import torch

import kernels
import kernels.backend as backend
from conftest import check_3way_all, double, forward_backward, DTYPES, dtype_id

SW = importlib.import_module("kernels.swiglu")  # the module; kernels.swiglu is the function

SHAPES = [
    (1, 768),       # one row
    (3, 7),         # tiny, odd
    (37, 1000),     # neither power of two
    (4, 3000),      # three 1024-column blocks, the last partial
    (3, 4097),      # one column past four blocks
    (16, 2048),     # the LLaMA-style hidden width for n_embd 768
    (64, 3072),     # GPT-2's MLP width
    (2, 5, 384),    # 3-D input
]
NAMES = ("y", "dgate", "dup")


def make_inputs(shape, dtype, device, up_dtype=None):
    gate = (torch.randn(shape, device=device) * 2).to(dtype)  # silu's bend and both tails
    up = torch.randn(shape, device=device).to(up_dtype or dtype)
    dy = torch.randn(shape, device=device).to(torch.promote_types(dtype, up_dtype or dtype))
    return (gate, up), dy


def op(backend_name):
    return lambda gate, up: kernels.swiglu(gate, up, backend=backend_name)


def run(backend_name, args, dy):
    return forward_backward(op(backend_name), args, [dy])


def run_ref(args, dy):
    return forward_backward(kernels.swiglu_ref, double(args), [dy.double()])


# ---------------------------------------------------------------- correctness

@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_matches_reference(dtype, shape, device):
    args, dy = make_inputs(shape, dtype, device)
    # shapes, dtypes, finiteness (every element written) and values, output and grads
    check_3way_all(NAMES, run("triton", args, dy), run("torch", args, dy), run_ref(args, dy))


# ---------------------------------------------------------------- backward with the output made again

@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("up_dtype", [None, torch.float32], ids=["", "fp32up"])
def test_backward_gives_the_output_again(dtype, shape, up_dtype, device):
    """swiglu_backward (model.py's recompute='activation'): its output made again and its gradients
    are as accurate as the forward's and the plain backward's, by the three-way rule. PyTorch's
    are the same bits; the Triton kernel with WITH_Y is another compiled kernel."""
    (gate, up), dy = make_inputs(shape, dtype, device, up_dtype)
    results_torch, ref = run("torch", (gate, up), dy), run_ref((gate, up), dy)
    for backend_name in ("triton", "torch"):
        dgate, dup, y = kernels.swiglu_backward(dy, gate, up, backend=backend_name)
        check_3way_all(NAMES, ((y,), (dgate, dup)), results_torch, ref)
    # the loop's last results are PyTorch's
    assert all(torch.equal(a, b) for a, b in zip((y, dgate, dup), results_torch[0] + results_torch[1]))


# ---------------------------------------------------------------- strided inputs

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(5, 1500), (2, 3, 96)], ids=["5x1500", "2x3x96"])
def test_halves_of_one_tensor(shape, dtype, device):
    # the MLP's fused projection h = x @ [W_gate; W_up]: gate and up are h.chunk(2, -1),
    # row-strided views the kernels read in place
    *lead, N = shape
    h = torch.randn(*lead, 2 * N, device=device).to(dtype)
    dy = torch.randn(shape, device=device).to(dtype)
    gate, up = h.chunk(2, dim=-1)
    assert not gate.is_contiguous() and gate.stride(-1) == 1
    assert backend.as_rows(gate).data_ptr() == gate.data_ptr()  # no copy
    assert backend.as_rows(up).data_ptr() == up.data_ptr()

    strided = run("triton", (gate, up), dy)
    contiguous = run("triton", (gate.contiguous(), up.contiguous()), dy)
    for name, s, c in zip(NAMES, strided[0] + strided[1], contiguous[0] + contiguous[1]):
        assert torch.equal(s, c), f"{name} differs from the contiguous inputs'"

    # and through h itself, as in the model: dh is [dgate, dup]
    leaf = h.detach().requires_grad_()
    y = kernels.swiglu(*leaf.chunk(2, dim=-1), backend="triton")
    y.backward(dy)
    assert torch.equal(y.detach(), contiguous[0][0])
    assert torch.equal(leaf.grad, torch.cat(contiguous[1], dim=-1))


@pytest.mark.parametrize("layout", ["transposed", "every_other_column", "strided_dy"])
def test_other_strides(layout, device):
    M, N = 6, 40
    gate, up = torch.randn(M, N, device=device), torch.randn(M, N, device=device)
    dy = torch.randn(M, N, device=device)
    if layout == "transposed":            # last dim stride M: copied
        gate = gate.t().contiguous().t()
    elif layout == "every_other_column":  # last dim stride 2: copied
        up = torch.stack((up, torch.randn_like(up)), dim=-1).flatten(-2)[:, ::2]
    else:                                 # the incoming gradient itself a transposed view
        dy = dy.t().contiguous().t()
    assert not all(t.is_contiguous() for t in (gate, up, dy))
    strided = run("triton", (gate, up), dy)
    contiguous = run("triton", (gate.contiguous(), up.contiguous()), dy.contiguous())
    for name, s, c in zip(NAMES, strided[0] + strided[1], contiguous[0] + contiguous[1]):
        assert torch.equal(s, c), f"{layout}: {name} differs from the contiguous inputs'"


# ---------------------------------------------------------------- mixed dtypes

@pytest.mark.parametrize("gate_dtype,up_dtype", [
    (torch.bfloat16, torch.float32),
    (torch.float32, torch.bfloat16),
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.float16),
], ids=["bf16_fp32", "fp32_bf16", "fp16_fp32", "bf16_fp16"])
def test_mixed_dtypes(gate_dtype, up_dtype, device):
    args, dy = make_inputs((6, 1100), gate_dtype, device, up_dtype=up_dtype)
    results = run("triton", args, dy)
    results_torch = run("torch", args, dy)
    (y,), (dgate, dup) = results
    assert y.dtype == results_torch[0][0].dtype == torch.promote_types(gate_dtype, up_dtype)
    assert dgate.dtype == gate_dtype and dup.dtype == up_dtype
    check_3way_all(NAMES, results, results_torch, run_ref(args, dy))


# ---------------------------------------------------------------- argument checks

@pytest.mark.parametrize("backend_name", ["triton", "auto"])
@pytest.mark.parametrize("up_shape", [(4, 9), (1, 8), (8, 4), (2, 2, 8)],
                         ids=["wider", "broadcastable", "transposed", "3d"])
def test_shape_mismatch_raises(up_shape, backend_name, device):
    gate, up = torch.randn(4, 8, device=device), torch.randn(up_shape, device=device)
    with pytest.raises(ValueError, match="one shape"):
        kernels.swiglu(gate, up, backend=backend_name)


# ---------------------------------------------------------------- torch.compile, empty

def test_torch_compile_fullgraph(device):
    torch._dynamo.reset()
    (gate, up), dy = make_inputs((8, 96), torch.float32, device)

    def f(gate, up, dy):
        y = kernels.swiglu(gate, up, backend="triton")
        return y, (y * dy).sum()

    compiled = torch.compile(f, fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    results = []
    for fn in (f, compiled):
        gs, us = (t.detach().clone().requires_grad_() for t in (gate, up))
        y, loss = fn(gs, us, dy)
        loss.backward()
        results.append((y.detach(), loss.detach(), gs.grad, us.grad))
    for name, e, c in zip(("y", "loss", "dgate", "dup"), *results):
        torch.testing.assert_close(c, e, msg=lambda m: f"{name}: {m}")
    torch._dynamo.reset()


@pytest.mark.parametrize("shape", [(0, 16), (2, 0, 16)], ids=["0x16", "2x0x16"])
def test_zero_rows(shape, device):
    args, dy = make_inputs(shape, torch.float32, device)
    (y,), (dgate, dup) = run("triton", args, dy)
    assert y.shape == dgate.shape == dup.shape == shape
