"""
Tests of kernels.layer_norm and kernels.rms_norm (one kernel pair, kernels/norm.py),
with and without the fused residual add: forward and every gradient against PyTorch
and a float64 reference, mixed dtypes and autocast, strided inputs, the too-wide
fallback, import without Triton, torch.compile, determinism, empty inputs (the
backend rule for every op: test_backend_rule.py).

On a machine without a GPU the kernels run in Triton's CPU interpreter (conftest.py).
"""
import importlib
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import kernels
import kernels.backend as backend
from conftest import ROOT, forward_backward, double, check_3way_all, count_launches, DTYPES, dtype_id

NORM = importlib.import_module("kernels.norm")

SHAPES = [
    (1, 768),       # one row
    (3, 7),         # tiny, odd
    (1, 1),         # a single element
    (37, 1000),     # neither power of two; the backward's last program runs past M
    (64, 768),      # GPT-2 width
    (16, 3072),     # its 4x MLP width
    (8, 4097),      # just over 4096: one row per tile
    (4, 32768),     # the widest required
    (2, 5, 384),    # 3-D input
]
RESIDUAL_SHAPES = [(3, 7), (37, 1000), (64, 768), (8, 4097), (2, 5, 384)]
# Wide rows, several per program (on the H100: 132 programs): the pipelined loads' shared
# memory. Only the GPU has that limit; the interpreter would take minutes.
if torch.cuda.is_available():
    SHAPES += [(600, 16384), (600, 32768)]
    RESIDUAL_SHAPES += [(600, 16384), (600, 32768)]
ids = lambda s: "x".join(map(str, s))


def call(norm, backend_name, **kwargs):
    """The norm as a function of (x, weight, bias, residual) for forward_backward;
    RMSNorm has no bias (it must be None)."""
    if norm == "layer_norm":
        return lambda x, w, b, r: kernels.layer_norm(x, w, b, residual=r, backend=backend_name, **kwargs)
    return lambda x, w, b, r: kernels.rms_norm(x, w, residual=r, backend=backend_name, **kwargs)


def reference(norm, **kwargs):
    if norm == "layer_norm":
        return lambda x, w, b, r: kernels.layer_norm_ref(x, w, b, residual=r, **kwargs)
    return lambda x, w, b, r: kernels.rms_norm_ref(x, w, residual=r, **kwargs)


def make_inputs(shape, dtype, device, has_bias=True, residual=False, w_dtype=None, r_dtype=None):
    """[x, weight, bias, residual] (bias, residual None where not asked for) and the
    output gradients [dy] or [dy, dh]."""
    N = shape[-1]
    x = (torch.randn(shape, device=device) * 2 + 0.5).to(dtype)  # nonzero mean
    w = (1 + 0.1 * torch.randn(N, device=device)).to(w_dtype or dtype)
    b = torch.randn(N, device=device).to(w_dtype or dtype) if has_bias else None
    r = torch.randn(shape, device=device).to(r_dtype or dtype) if residual else None
    # in x's dtype: every run rounds dy the same way whatever its output dtype
    dys = [torch.randn(shape, device=device).to(dtype) for _ in range(1 + residual)]
    return [x, w, b, r], dys


def names(residual):
    return ("y", "h")[:1 + residual] + ("dx", "dw", "db", "dresidual")


def check(norm, args, dys, **kwargs):
    """Kernel vs PyTorch vs float64, output(s) and every gradient."""
    res = forward_backward(call(norm, "triton", **kwargs), args, dys)
    res_torch = forward_backward(call(norm, "torch", **kwargs), args, dys)
    refs = forward_backward(reference(norm, **kwargs), double(args), double(dys))
    check_3way_all(names(args[3] is not None), res, res_torch, refs)
    return res


# ---------------------------------------------------------------- correctness

@pytest.mark.parametrize("norm,has_bias", [("layer_norm", True), ("layer_norm", False), ("rms_norm", False)],
                         ids=["ln_bias", "ln_nobias", "rms"])
@pytest.mark.parametrize("shape", SHAPES, ids=ids)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_matches_reference(dtype, shape, norm, has_bias, device):
    args, dys = make_inputs(shape, dtype, device, has_bias)
    check(norm, args, dys)


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("shape", RESIDUAL_SHAPES, ids=ids)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_residual_matches_reference(dtype, shape, norm, device):
    args, dys = make_inputs(shape, dtype, device, has_bias=norm == "layer_norm", residual=True)
    check(norm, args, dys)


def backward_with_y(norm, x, r, w, b, dy, dh_out, out_dtype):
    """norm_fwd, then norm_bwd_with_y on what it kept: (the forward's y, ((y, h), (dh, dw, db, dh))),
    h and dh's second place only with a residual, the parameters' gradients in their dtypes."""
    is_rms, eps = norm == "rms_norm", 1e-6 if norm == "rms_norm" else 1e-5
    y_fwd, h, stats = NORM.norm_fwd(x, r, w, b, eps, is_rms, out_dtype)
    h = x if r is None else h
    dh, dwdb, y = NORM.norm_bwd_with_y(dy, dh_out, h, w, b, stats, is_rms, out_dtype)
    dw, db = NORM.weight_grads(dwdb, w.dtype, None if b is None else b.dtype)
    return y_fwd, ((y, h)[:1 + (r is not None)], (dh, dw, db, None if r is None else dh))


@pytest.mark.parametrize("norm,has_bias", [("layer_norm", True), ("layer_norm", False), ("rms_norm", False)],
                         ids=["ln_bias", "ln_nobias", "rms"])
@pytest.mark.parametrize("shape", RESIDUAL_SHAPES, ids=ids)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_backward_gives_the_output_again(dtype, shape, norm, has_bias, device):
    """norm_bwd_with_y (model.py's LinearOfNorm, for recompute): from h and the forward's statistics,
    the output made again and every gradient, by the three-way rule against the residual norm's
    forward and backward (dh is the gradient of x and of the residual alike)."""
    (x, w, b, r), (dy, dh_out) = make_inputs(shape, dtype, device, has_bias, residual=True)
    y_fwd, results = backward_with_y(norm, x, r, w, b, dy, dh_out, dtype)
    args = [x, w, b, r]
    check_3way_all(names(True), results, forward_backward(call(norm, "torch"), args, [dy, dh_out]),
                   forward_backward(reference(norm), double(args), double([dy, dh_out])))
    if kernels.INTERPRET:  # the forward's arithmetic in its order; on the GPU the compiler may fuse it otherwise
        assert torch.equal(results[0][0], y_fwd)


@pytest.mark.parametrize("norm,has_bias", [("layer_norm", True), ("rms_norm", False)], ids=["ln_bias", "rms"])
@pytest.mark.parametrize("h_dtype", [torch.float32, torch.bfloat16], ids=["h_fp32", "h_bf16"])
def test_backward_gives_the_output_again_without_residual_in_another_dtype(h_dtype, norm, has_bias, device):
    """norm_bwd_with_y where h is the input itself (no residual, no dh_out) and y is asked for in bf16, as
    the model's first norm under autocast has it (an fp32 stream, or a bf16 one)."""
    (x, w, b, _), (dy,) = make_inputs((37, 1000), h_dtype, device, has_bias)
    dy = dy.to(torch.bfloat16)  # the next matmul's gradient, in its dtype
    y_fwd, results = backward_with_y(norm, x, None, w, b, dy, None, torch.bfloat16)
    args = [x, w, b, None]
    check_3way_all(names(False), results, forward_backward(call(norm, "torch", out_dtype=torch.bfloat16), args, [dy]),
                   forward_backward(reference(norm), double(args), double([dy])))
    (y,), (dh, *_) = results
    assert y.dtype == torch.bfloat16 and dh.dtype == h_dtype
    if kernels.INTERPRET:
        assert torch.equal(y, y_fwd)


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_eps_is_used(norm, device):
    # nearly constant rows (LayerNorm) / nearly zero rows (RMSNorm): the result depends on eps
    x = torch.full((4, 64), 3.0 if norm == "layer_norm" else 0.0, device=device) \
        + 1e-4 * torch.randn(4, 64, device=device)
    for eps in (1e-5, 1e-2):
        check(norm, [x, torch.ones(64, device=device), None, None], [torch.randn(4, 64, device=device)], eps=eps)


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_unused_h_sends_no_gradient(norm, device):
    # the last block's h feeds nothing: backward through y alone, as the final norm does
    args, _ = make_inputs((9, 48), torch.float32, device, has_bias=False, residual=True)
    grads = []
    for fn in (call(norm, "triton"), reference(norm)):
        x, r = (t.detach().requires_grad_() for t in (args[0], args[3]))
        y, h = fn(x, args[1], None, r)
        y.sum().backward()
        grads.append((x.grad, r.grad))
    torch.testing.assert_close(grads[0], grads[1])


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_only_h_used(norm, device):
    # y unused: x and the residual get h's gradient, the norm's parameters none (as in PyTorch)
    args, _ = make_inputs((5, 24), torch.float32, device, residual=True)
    grads = []
    for fn in (call(norm, "triton"), reference(norm)):
        x, w, r = (t.detach().requires_grad_() for t in (args[0], args[1], args[3]))
        b = args[2].detach().requires_grad_() if norm == "layer_norm" else None
        y, h = fn(x, w, b, r)
        (2 * h).sum().backward()
        grads.append((x.grad, r.grad, w.grad, None if b is None else b.grad))
    assert grads[0][2:] == (None, None) and grads[1][2:] == (None, None)
    torch.testing.assert_close(grads[0][:2], grads[1][:2])


# ---------------------------------------------------------------- mixed dtypes, autocast

@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("x_dtype", [torch.bfloat16, torch.float16], ids=["x_bf16", "x_fp16"])
def test_mixed_dtypes(x_dtype, norm, device):
    # half-precision activations with fp32 parameters, as a model under autocast has
    args, dys = make_inputs((6, 256), x_dtype, device, has_bias=norm == "layer_norm", w_dtype=torch.float32)
    res = forward_backward(call(norm, "triton"), args, dys)
    if device == "cpu":
        res_torch = forward_backward(reference(norm), args, dys)  # torch takes the mix on CPU
    else:
        # CUDA's F.layer_norm rejects it outside autocast ("expected scalar type BFloat16
        # but found Float"): compare with PyTorch in fp32, rounded to the kernel's dtypes
        (y,), grads = forward_backward(reference(norm), [args[0].float()] + args[1:], dys)
        res_torch = ((y.to(x_dtype),), (grads[0].to(x_dtype),) + grads[1:])
    assert res[0][0].dtype == res_torch[0][0].dtype == x_dtype
    assert res[1][1].dtype == torch.float32
    check_3way_all(names(False), res, res_torch, forward_backward(reference(norm), double(args), double(dys)))


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_residual_mixed_dtypes(norm, device):
    # the model under autocast: a bf16 sublayer output added to the fp32 residual stream
    args, dys = make_inputs((6, 256), torch.bfloat16, device, has_bias=norm == "layer_norm", residual=True,
                            w_dtype=torch.float32, r_dtype=torch.float32)
    res = forward_backward(call(norm, "triton"), args, dys)
    res_torch = forward_backward(reference(norm), [args[0].float()] + args[1:], dys)
    (y, h), (dx, dw, db, dr) = res
    assert h.dtype == y.dtype == dr.dtype == torch.float32 and dx.dtype == torch.bfloat16
    res_torch = (res_torch[0], (res_torch[1][0].bfloat16(),) + res_torch[1][1:])
    check_3way_all(names(True), res, res_torch, forward_backward(reference(norm), double(args), double(dys)))


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
@pytest.mark.parametrize("x_dtype", [torch.bfloat16, torch.float32], ids=["x_bf16", "x_fp32"])
def test_autocast(x_dtype, residual, norm, device):
    # under CUDA autocast torch runs layer_norm (and, in newer releases, rms_norm) in fp32
    # and returns fp32; CPU autocast leaves both alone
    args, dys = make_inputs((6, 256), x_dtype, device, has_bias=norm == "layer_norm", residual=residual,
                            w_dtype=torch.float32, r_dtype=torch.float32)

    def under_autocast(fn):
        def f(*a):
            with torch.autocast(device, dtype=torch.bfloat16):
                return fn(*a)
        return f

    res = forward_backward(under_autocast(call(norm, "triton")), args, dys)
    res_torch = forward_backward(under_autocast(reference(norm)), args, dys)
    h_dtype = torch.promote_types(x_dtype, torch.float32 if residual else x_dtype)
    expected = torch.float32 if device == "cuda" and NORM.AUTOCAST_FP32[norm] else h_dtype
    assert res[0][0].dtype == res_torch[0][0].dtype == expected
    check_3way_all(names(residual), res, res_torch, forward_backward(reference(norm), double(args), double(dys)))


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16], ids=["out_bf16", "out_fp16"])
def test_out_dtype(out_dtype, residual, norm, device):
    # the model under autocast: fp32 stream, y in the next matmul's dtype, its gradient arriving in it
    args, dys = make_inputs((37, 1000), torch.float32, device, has_bias=norm == "layer_norm", residual=residual)
    dys[0] = dys[0].to(out_dtype)
    res = forward_backward(call(norm, "triton", out_dtype=out_dtype), args, dys)
    res_torch = forward_backward(call(norm, "torch", out_dtype=out_dtype), args, dys)
    assert res[0][0].dtype == res_torch[0][0].dtype == out_dtype
    # h, the gradients: as the inputs
    assert all(t.dtype == torch.float32 for t in res[0][1:] + res[1] if t is not None)
    check_3way_all(names(residual), res, res_torch, forward_backward(reference(norm), double(args), double(dys)))


# ---------------------------------------------------------------- strided inputs

@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("layout", ["transposed", "every_other_column", "row_slice"])
def test_non_contiguous(layout, dtype, norm, device):
    M, N = 6, 40

    def strided():
        if layout == "transposed":      # last dim has stride M
            return torch.randn(N, M, device=device, dtype=dtype).t()
        if layout == "every_other_column":  # last dim has stride 2
            return torch.randn(M, 2 * N, device=device, dtype=dtype)[:, ::2]
        return torch.randn(M, 2 * N, device=device, dtype=dtype)[:, :N]  # rows 2N apart: read in place

    x, r, dy, dh = strided(), strided(), strided(), strided()
    assert x.shape == (M, N) and not x.is_contiguous()
    w = 1 + 0.1 * torch.randn(N, device=device, dtype=dtype)
    b = torch.randn(N, device=device, dtype=dtype) if norm == "layer_norm" else None
    fn = call(norm, "triton")
    for args, dys in (([x, w, b, None], [dy]), ([x, w, b, r], [dy, dh])):
        res = forward_backward(fn, args, dys)
        res_contiguous = forward_backward(fn, [a if a is None else a.contiguous() for a in args],
                                          [d.contiguous() for d in dys])
        # equal up to the order of the row sums: on a GPU a row stride divisible by 16 may
        # load wider vectors, which changes how the reduction is split among threads
        for name, s, c in zip(names(args[3] is not None), res[0] + res[1], res_contiguous[0] + res_contiguous[1]):
            if s is None:
                assert c is None, name
            else:
                torch.testing.assert_close(s, c, msg=lambda m: f"{layout}: {name}: {m}")


def test_row_stride_read_in_place(device):
    x = torch.randn(5, 96, device=device)[:, :48]
    assert backend.as_rows(x).data_ptr() == x.data_ptr()


def test_rows_of_gives_each_rows_start():
    """rows_of's (tensor, row stride) addresses row r at r * stride, as the kernels read it: contiguous
    tensors as they are (size-1 dims may carry any stride), others through as_rows."""
    cases = [torch.randn(3, 4, 40), torch.randn(3, 40).as_strided((3, 1, 40), (40, 7, 1)),
             torch.randn(9, 5).as_strided((5, 1), (1, 9)), torch.randn(40),
             torch.randn(6, 80)[:, ::2], torch.randn(1, 40).expand(4, 40), torch.randn(5, 96)[:, :48]]
    for t in cases:
        rows, stride = backend.rows_of(t)
        for r, row in enumerate(t.reshape(-1, t.shape[-1])):
            read = rows.as_strided(row.shape, (1,), rows.storage_offset() + r * stride)
            assert torch.equal(read, row), (tuple(t.shape), t.stride(), r)


# ---------------------------------------------------------------- fallbacks, argument checks
# (the backend rule: test_backend_rule.py)

@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_too_wide_falls_back_saying_so_once(norm, monkeypatch, capsys, device):
    monkeypatch.setattr(backend, "_said", set())  # forget earlier messages
    launches = count_launches(monkeypatch, NORM)
    N = NORM.MAX_WIDTH + 1
    args, _ = make_inputs((1, N), torch.float32, device, has_bias=False)
    for _ in range(2):
        assert torch.equal(call(norm, "auto")(*args), reference(norm)(*args))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and norm in lines[0] and "width" in lines[0], lines
    assert launches["_norm_fwd_kernel"] == 0
    with pytest.raises(RuntimeError, match="width"):
        call(norm, "triton")(*args)


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_no_weight_goes_to_pytorch(norm, monkeypatch, capsys, device):
    """weight=None (elementwise_affine=False): PyTorch's result, one printed line; backend='triton' refuses."""
    monkeypatch.setattr(backend, "_said", set())
    x = torch.randn(3, 37, device=device)
    want = F.layer_norm(x, (37,), eps=1e-5) if norm == "layer_norm" else F.rms_norm(x, (37,), eps=1e-6)
    assert torch.equal(getattr(kernels, norm)(x, None), want)  # (the ops' default eps)
    assert "no weight" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match="no weight"):
        getattr(kernels, norm)(x, None, backend="triton")


def test_invalid_shapes(device):
    x, w = torch.randn(2, 8, device=device), torch.ones(8, device=device)
    with pytest.raises(ValueError, match="weight"):
        kernels.rms_norm(x, torch.ones(7, device=device), backend="triton")
    with pytest.raises(ValueError, match="residual shape"):
        kernels.rms_norm(x, w, residual=torch.randn(2, 9, device=device), backend="triton")


def test_imports_without_triton():
    code = (
        "import sys; sys.modules['triton'] = None\n"  # `import triton` now raises ImportError
        "import torch, torch.nn.functional as F\n"
        "import kernels\n"
        "assert kernels.TRITON_AVAILABLE is False\n"
        "x, w = torch.randn(4, 8), torch.ones(8)\n"
        "torch.testing.assert_close(kernels.layer_norm(x, w), F.layer_norm(x, (8,), w), rtol=0, atol=0)\n"
        "torch.testing.assert_close(kernels.rms_norm(x, w), F.rms_norm(x, (8,), w, 1e-6), rtol=0, atol=0)\n"
        "y = kernels.swiglu(x); y = kernels.gelu(x, w); "
        "y = kernels.rotary(x.view(1, 1, 4, 8), x[:, :4], x[:, 4:])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


# ---------------------------------------------------------------- torch.compile, determinism, empty

@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
def test_torch_compile_fullgraph(residual, norm, device):
    torch._dynamo.reset()
    args, dys = make_inputs((8, 96), torch.float32, device, has_bias=norm == "layer_norm", residual=residual)
    fn = call(norm, "triton")
    compiled = torch.compile(fn, fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    eager, comp = forward_backward(fn, args, dys), forward_backward(compiled, args, dys)
    for name, e, c in zip(names(residual), eager[0] + eager[1], comp[0] + comp[1]):
        torch.testing.assert_close(c, e, msg=lambda m: f"{name}: {m}")
    torch._dynamo.reset()


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_width_one_compiled(norm, device):
    # width 1 under torch.compile, whose launch keeps FMA contraction on: LayerNorm's dx
    # must be exactly 0 (y = bias), RMSNorm's as close as PyTorch's
    torch._dynamo.reset()
    args, dys = make_inputs((64, 1), torch.float32, device, has_bias=norm == "layer_norm")
    fn = torch.compile(call(norm, "triton"), fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    res = forward_backward(fn, args, dys)
    check_3way_all(names(False), res, forward_backward(call(norm, "torch"), args, dys),
                   forward_backward(reference(norm), double(args), double(dys)))
    if norm == "layer_norm":
        (y,), (dx, *_) = res
        assert torch.equal(dx, torch.zeros_like(dx)) and torch.equal(y, args[2].expand_as(y))
    torch._dynamo.reset()


@pytest.mark.parametrize("shape", [(37, 1000), (300, 64)], ids=ids)
def test_backward_is_deterministic(shape, device):
    args, dys = make_inputs(shape, torch.float32, device, residual=True)
    first, second = (forward_backward(call("layer_norm", "triton"), args, dys) for _ in range(2))
    for name, a, c in zip(names(True), first[0] + first[1], second[0] + second[1]):
        assert torch.equal(a, c), f"{name} differs between two runs"


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("residual", [False, True], ids=["plain", "residual"])
def test_zero_rows(residual, norm, device):
    args, dys = make_inputs((0, 16), torch.float32, device, has_bias=norm == "layer_norm", residual=residual)
    outs, grads = forward_backward(call(norm, "triton"), args, dys)
    assert all(o.shape == (0, 16) for o in outs) and grads[0].shape == (0, 16)
    assert torch.equal(grads[1], torch.zeros(16, device=device))
