"""
Tests of kernels.gelu_mlp: the MLP with GELU (tanh form) in its products' epilogues, output and the gradients of
x and both weights against PyTorch's MLP in the same dtype and a float64 reference (the three-way rule), over
dtypes and shapes (one row, odd, rows not 16-byte aligned, 3-D, GPT-2's real width on the GPU), under autocast
with fp32 weights as the model stores them, torch.compile without a graph break, and the argument checks; and the
two epilogue products that gelu_mlp is built from, as ops of their own.
On the GPU the products are cuBLASLt's with the epilogues (test_matmul.py tests every algorithm it admits for
them); on the CPU they are matmul_plan's fallback, PyTorch's, through the same autograd Function.
"""
import pytest
import torch

import kernels
from kernels.gelu_mlp import gelu_mlp_fwd, gelu_mlp_bwd, GeluMLPFunction, gelu_linear_fwd, dgelu_matmul
from conftest import assert_close_3way, check_3way_all, double, forward_backward, DTYPES, dtype_id

CUDA = torch.cuda.is_available()
# (..., C) input and hidden width: one row; odd; rows of 41 and 100 bf16 words (not 16-byte aligned: PyTorch's
# products inside the plan); wider than a tile; 3-D; GPT-2's MLP (GPU only: float64 products on the CPU are slow)
SHAPES = [((1, 64), 256), ((37, 40), 136), ((5, 41), 100), ((300, 136), 520), ((2, 5, 48), 200)] + (
    [((2048, 768), 3072)] if CUDA else [])
NAMES = ("y", "dx", "dw_fc", "dw_proj")


def make_inputs(shape, hidden, dtype, device, weight_dtype=None):
    C = shape[-1]
    x = torch.randn(shape, device=device).to(dtype)
    w_fc = (torch.randn(hidden, C, device=device) * C ** -0.5 * 2).to(weight_dtype or dtype)  # GELU's bend and tails
    w_proj = (torch.randn(C, hidden, device=device) * hidden ** -0.5).to(weight_dtype or dtype)
    return (x, w_fc, w_proj), torch.randn(*shape, device=device).to(dtype)


def run(backend_name, args, dy):
    return forward_backward(lambda *a: kernels.gelu_mlp(*a, backend=backend_name), args, [dy])


@pytest.mark.parametrize("shape,hidden", SHAPES,
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_matches_reference(dtype, shape, hidden, device):
    args, dy = make_inputs(shape, hidden, dtype, device)
    ref = forward_backward(kernels.gelu_mlp_ref, double(args), [dy.double()])
    check_3way_all(NAMES, run("triton", args, dy), run("torch", args, dy), ref)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
def test_under_autocast_with_fp32_weights(dtype, device):
    """As the model runs it: x in autocast's dtype, the weights fp32 and their gradients fp32, against PyTorch's
    MLP under the same autocast (F.linear casting the weights)."""
    if device == "cpu" and dtype == torch.float16:
        pytest.skip("autocast on the CPU takes bf16 only")
    args, dy = make_inputs((24, 72), 264, dtype, device, weight_dtype=torch.float32)
    with torch.autocast(device, dtype=dtype):
        results = run("triton", args, dy)
        results_torch = run("torch", args, dy)
    ref = forward_backward(kernels.gelu_mlp_ref, double(args), [dy.double()])
    for (out, out_torch) in zip(results[0] + results[1], results_torch[0] + results_torch[1]):
        assert out.dtype == out_torch.dtype
    check_3way_all(NAMES, results, results_torch, ref)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
def test_copies_are_what_the_products_read(dtype, device):
    """Under autocast, kept copies of the weights (kernels/linear.py's matmul_copy) are what the products read,
    forward and backward: the weights' own casts as copies give the plain call's output and gradients bit for bit;
    other copies those of fp32 weights equal to them, the gradients on the weights passed in; PyTorch's path casts
    the weights; a copy not in x's dtype or not of its weight's shape raises."""
    if device == "cpu" and dtype == torch.float16:
        pytest.skip("autocast on the CPU takes bf16 only")
    (x, w_fc, w_proj), dy = make_inputs((24, 72), 264, dtype, device, weight_dtype=torch.float32)
    others = [(torch.randn_like(w) * w.std()).to(dtype) for w in (w_fc, w_proj)]
    casts = [w.to(dtype) for w in (w_fc, w_proj)]

    def run(weights, copies, backend="triton"):
        with torch.autocast(device, dtype=dtype):
            return forward_backward(lambda *a: kernels.gelu_mlp(*a, backend=backend, copies=copies),
                                    [x] + [w.clone() for w in weights], [dy])
    same = lambda a, b: all(map(torch.equal, a[0] + a[1], b[0] + b[1]))
    plain = run((w_fc, w_proj), (None, None))
    assert same(run((w_fc, w_proj), casts), plain)
    assert same(run((w_fc, w_proj), others), run([o.float() for o in others], (None, None)))
    assert same(run((w_fc, w_proj), (others[0], None)), run((others[0].float(), w_proj), (None, None)))
    assert same(run((w_fc, w_proj), others, "torch"), run((w_fc, w_proj), (None, None), "torch"))
    assert not same(run((w_fc, w_proj), others), plain)
    for bad in ((others[0].float(), None), (None, others[0])):  # a copy in fp32; a copy of w_fc's shape for w_proj
        with pytest.raises(ValueError, match="a copy has its weight's shape and device, x's dtype"), \
                torch.autocast(device, dtype=dtype):
            kernels.gelu_mlp(x, w_fc, w_proj, backend="triton", copies=bad)


def test_torch_compile_fullgraph(device):
    torch._dynamo.reset()
    args, dy = make_inputs((16, 48), 192, torch.bfloat16 if CUDA else torch.float32, device)

    def f(x, w_fc, w_proj):
        return kernels.gelu_mlp(x, w_fc, w_proj, backend="triton")

    compiled = torch.compile(f, fullgraph=True, backend="inductor" if CUDA else "aot_eager")
    eager, got = (forward_backward(fn, args, [dy]) for fn in (f, compiled))
    for name, e, c in zip(NAMES, eager[0] + eager[1], got[0] + got[1]):
        torch.testing.assert_close(c, e, rtol=0, atol=0, msg=lambda m: f"{name}: {m}")  # the same products
    torch._dynamo.reset()


def test_a_frozen_weight_gets_no_gradient(device):
    (x, w_fc, w_proj), dy = make_inputs((8, 32), 96, torch.float32, device)
    x.requires_grad_()
    w_proj.requires_grad_()  # w_fc frozen
    GeluMLPFunction.apply(x, w_fc, w_proj).backward(dy)
    assert w_fc.grad is None and x.grad is not None and w_proj.grad is not None


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
def test_weight_gradients_come_in_the_weights_dtype(dtype, device):
    """fp32 weights (as the model stores them) get fp32 gradients straight from the products' fp32 sums, as
    accurate as PyTorch's (which rounds them to the products' dtype, then casts)."""
    if device == "cpu" and dtype == torch.float16:
        pytest.skip("autocast on the CPU takes bf16 only")
    args, dy = make_inputs((40, 48), 136, dtype, device, weight_dtype=torch.float32)
    x, w_fc, w_proj = args
    y, g, h = gelu_mlp_fwd(x, w_fc.to(dtype), w_proj.to(dtype))
    _, dw_fc, dw_proj = gelu_mlp_bwd(dy, x, h, g, w_fc.to(dtype), w_proj.to(dtype), torch.float32)
    assert dw_fc.dtype == dw_proj.dtype == torch.float32
    with torch.autocast(device, dtype=dtype):
        results_torch = forward_backward(kernels.gelu_mlp_ref, args, [dy])
    ref = forward_backward(kernels.gelu_mlp_ref, double(args), [dy.double()])
    for name, got, want, r in zip(NAMES[2:], (dw_fc, dw_proj), results_torch[1][1:], ref[1][1:]):
        assert_close_3way(name, got, want.float(), r)


def test_shapes_and_dtypes_are_checked(device):
    (x, w_fc, w_proj), dy = make_inputs((8, 32), 96, torch.float32, device)
    with pytest.raises(ValueError, match="not \\(N, C\\)"):
        GeluMLPFunction.apply(x, w_fc, w_proj[:, :95])
    with pytest.raises(ValueError, match="not one dtype"):
        gelu_mlp_fwd(x, w_fc.double(), w_proj)
    with pytest.raises(ValueError, match="w_fc in"):
        GeluMLPFunction.apply(x, w_fc, w_proj.double())
    y, g, h = gelu_mlp_fwd(x, w_fc, w_proj)
    with pytest.raises(ValueError, match="for x"):
        gelu_mlp_bwd(dy[:4], x, h, g, w_fc, w_proj, torch.float32)


def test_custom_ops_pass_opcheck(device):
    """The ops torch.compile sees (fake shapes and dtypes as the real ones, no aliasing, schema)."""
    (x, w_fc, w_proj), dy = make_inputs((16, 48), 136, torch.bfloat16, device)
    y, g, h = gelu_mlp_fwd(x, w_fc, w_proj)
    torch.library.opcheck(torch.ops.kernels.gelu_mlp_fwd.default, (x, w_fc, w_proj))
    torch.library.opcheck(torch.ops.kernels.gelu_mlp_bwd.default, (dy, x, h, g, w_fc, w_proj, torch.float32))


def test_outside_autocast_mixed_dtypes_are_refused(device):
    (x, w_fc, w_proj), _ = make_inputs((8, 32), 96, torch.bfloat16, device, weight_dtype=torch.float32)
    with pytest.raises(ValueError, match="outside autocast"):
        kernels.gelu_mlp(x, w_fc, w_proj, backend="triton")


@pytest.mark.parametrize("shape,hidden", [s for s in SHAPES if len(s[0]) == 2],
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_epilogue_products_as_ops(dtype, shape, hidden, device):
    """gelu_linear_fwd's h and g, and dgelu_matmul's dh (given that h), against PyTorch's product and GELU in the same
    dtype and float64 (the three-way rule); opcheck of both ops."""
    (x, w_fc, w_proj), dy = make_inputs(shape, hidden, dtype, device)
    h, g = gelu_linear_fwd(x, w_fc)
    h64 = x.double() @ w_fc.double().T
    h_torch = x @ w_fc.T
    assert_close_3way("h", h, h_torch, h64)
    assert_close_3way("g", g, torch.nn.functional.gelu(h_torch, approximate="tanh"),
                      torch.nn.functional.gelu(h64, approximate="tanh"))
    dh = dgelu_matmul(dy, w_proj, h)
    want = torch.ops.aten.gelu_backward(dy.double() @ w_proj.double(), h.double(), approximate="tanh")
    assert_close_3way("dh", dh, torch.ops.aten.gelu_backward(dy @ w_proj, h, approximate="tanh"), want)
    if shape[0] <= 64:
        torch.library.opcheck(torch.ops.kernels.gelu_linear_fwd.default, (x, w_fc))
        torch.library.opcheck(torch.ops.kernels.dgelu_matmul.default, (dy, w_proj, h))
