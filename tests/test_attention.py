"""
Tests of kernels.flash_attention (and flash_attention_qkv, the same on one packed
projection): the output and dq, dk, dv of the Triton kernels
against PyTorch's SDPA in the same dtype and a float64 reference (the three-way rule),
over odd sequence lengths, head dims, grouped-query ratios, causal and not; q, k, v
read in place from one projection; the backend rule and its fallbacks (fp32, dropout,
other head dims); determinism; torch.compile; memory that grows as O(T); an H100 build
whose tensor-core instructions stay asynchronous.

On a machine without a GPU the kernels run in Triton's CPU interpreter (conftest.py),
on small shapes; the GPU adds GPT-2's and the benchmark's real shapes.
"""
import importlib
import json
import os
import subprocess
import sys

import pytest
import torch

import kernels
import kernels.backend as backend
from conftest import check_3way_all, double, forward_backward, count_launches, dtype_id

FA = importlib.import_module("kernels.attention")
CUDA = torch.cuda.is_available()

# (B, H, Hkv, T, D): GQA ratios 1, 2 and 4, lengths that are not multiples of any block
SHAPES = [
    (1, 4, 4, 37, 64),
    (2, 4, 2, 50, 64),
    (1, 4, 1, 100, 64),
    (1, 2, 2, 70, 128),
    (1, 4, 2, 33, 128),
    (1, 4, 1, 48, 128),     # a whole number of every interpreter block
    (2, 2, 1, 1, 64),       # one token
    (1, 2, 2, 29, 32),      # a head dim past the two the issue names
]
if CUDA:
    SHAPES += [
        (2, 12, 12, 1024, 64),  # GPT-2 small
        (1, 8, 2, 1000, 128),   # wider than every block, GQA 4
        (1, 4, 4, 4096, 128),   # the benchmark's long rows
    ]
DTYPES = [torch.bfloat16, torch.float16]  # fp32 goes to SDPA: test_fallbacks
NAMES = ("o", "dq", "dk", "dv")
# dS = P * (dP - delta) takes the difference of two fp32 sums; where the exact result
# is 0 (dq at T = 1) fp32 rounding of unit-sized terms is left
ATOL = 1e-6
shape_id = lambda s: "B{}H{}kv{}T{}D{}".format(*s)


def make_inputs(shape, dtype, device):
    B, H, Hkv, T, D = shape
    q, k, v, do = (torch.randn(b, h, T, D, device=device).to(dtype)
                   for b, h in ((B, H), (B, Hkv), (B, Hkv), (B, H)))
    return (q, k, v), do


def run(backend_name, args, do, causal, scale=None):
    fn = lambda q, k, v: kernels.flash_attention(q, k, v, causal, scale, backend=backend_name)
    return forward_backward(fn, args, [do])


def run_ref(args, do, causal, scale=None):
    fn = lambda q, k, v: kernels.flash_attention_ref(q, k, v, causal, scale)
    return forward_backward(fn, double(args), [do.double()])


# ---------------------------------------------------------------- correctness

@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_matches_reference(dtype, shape, causal, device):
    args, do = make_inputs(shape, dtype, device)
    check_3way_all(NAMES, run("triton", args, do, causal), run("torch", args, do, causal), run_ref(args, do, causal),
                   ATOL)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_read_in_place_from_one_projection(dtype, device):
    """The model's layout: q, k, v are (B, H, T, D) views of a (B, T, H + 2 Hkv, D) tensor,
    with a non-default scale; the output is a (B, H, T, D) view of a (B, T, H, D) tensor."""
    B, H, Hkv, T, D = 2, 4, 2, 45, 64
    qkv = torch.randn(B, T, H + 2 * Hkv, D, device=device).to(dtype).transpose(1, 2)
    args = qkv.split([H, Hkv, Hkv], dim=1)
    assert not args[0].is_contiguous()
    do = torch.randn(B, H, T, D, device=device).to(dtype)
    out = run("triton", args, do, True, 0.3)
    check_3way_all(NAMES, out, run("torch", args, do, True, 0.3), run_ref(args, do, True, 0.3))
    o = out[0][0]
    assert o.transpose(1, 2).is_contiguous()  # what the output projection reads, with no copy


def make_qkv(shape, dtype, device):
    B, H, Hkv, T, D = shape
    return torch.randn(B, T, H + 2 * Hkv, D, device=device).to(dtype), torch.randn(B, H, T, D, device=device).to(dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_packed_qkv_matches_reference(dtype, shape, device):
    """flash_attention_qkv: o, and the projection's gradient as one (B, T, H + 2 Hkv, D) tensor."""
    qkv, do = make_qkv(shape, dtype, device)
    H = shape[1]
    fn = lambda backend_name: lambda t: kernels.flash_attention_qkv(t, H, backend=backend_name)
    out = forward_backward(fn("triton"), [qkv], [do])
    check_3way_all(("o", "dqkv"), out, forward_backward(fn("torch"), [qkv], [do]),
                   forward_backward(fn("torch"), double([qkv]), [do.double()]), ATOL)
    assert out[1][0].is_contiguous()
    # PyTorch's path splits qkv before transposing (as nanoGPT): autograd concatenates the three gradients
    # along rows, contiguous (autograd.grad: the gradient as made, before a leaf's .grad would be copied to its layout)
    leaf = qkv.detach().requires_grad_()
    dqkv, = torch.autograd.grad(fn("torch")(leaf), leaf, do.to(qkv.dtype))
    assert dqkv.is_contiguous()


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
def test_packed_qkv_gradient_is_the_split_one_without_the_copy(causal, monkeypatch, device):
    """The same kernels as flash_attention on views of qkv, bit for bit; the gradient comes
    back from them as it is, where the views' gradients go through autograd's concatenation."""
    B, H, Hkv, T, D = 2, 4, 2, 45, 64
    qkv, do = make_qkv((B, H, Hkv, T, D), torch.bfloat16, device)
    split = forward_backward(lambda t: kernels.flash_attention(*t.transpose(1, 2).split([H, Hkv, Hkv], dim=1), causal,
                                                               0.3, backend="triton"), [qkv], [do])
    counts = count_launches(monkeypatch, FA)
    packed = forward_backward(lambda t: kernels.flash_attention_qkv(t, H, causal, 0.3, backend="triton"), [qkv], [do])
    assert torch.equal(packed[0][0], split[0][0]) and torch.equal(packed[1][0], split[1][0])
    assert all(n == 1 for n in counts.values()), counts  # forward, dQ, dK dV: nothing else launched by us
    with pytest.raises(ValueError, match=r"is not \(B, T, 4 \+ 2 Hkv, D\)"):
        kernels.flash_attention_qkv(qkv[:, :, :7], H, backend="triton")  # 3 heads left: not 2 Hkv


@pytest.mark.skipif(not CUDA, reason="the interpreter has one config; the GPU autotunes among CONFIGS")
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
@pytest.mark.parametrize("shape", [(1, 12, 12, 1024, 64), (1, 4, 2, 2000, 128)], ids=shape_id)
def test_autotuned_choice_matches_reference(shape, causal, monkeypatch):
    """The tests run the first candidate (KERNELS_AUTOTUNE=0); here the autotuner picks."""
    for name, kernel, pass_ in (('_fwd_tuned', FA._flash_attention_fwd_kernel, 'fwd'),
                                ('_dkdv_tuned', FA._flash_attention_bwd_dkdv_kernel, 'dkdv'),
                                ('_dq_tuned', FA._flash_attention_bwd_dq_kernel, 'dq')):
        monkeypatch.setattr(FA, name, FA._autotuned(kernel, pass_, autotune=True))
    args, do = make_inputs(shape, torch.bfloat16, "cuda")
    check_3way_all(NAMES, run("triton", args, do, causal), run("torch", args, do, causal), run_ref(args, do, causal),
                   ATOL)


def test_deterministic(device):
    args, do = make_inputs((1, 4, 2, 70, 64), torch.bfloat16, device)
    first, again = run("triton", args, do, True), run("triton", args, do, True)
    for name, a, b in zip(NAMES, first[0] + first[1][:3], again[0] + again[1][:3]):
        assert torch.equal(a, b), name


# ---------------------------------------------------------------- the backend rule

def test_triton_torch_auto_launches(monkeypatch, device):
    args, do = make_inputs((1, 2, 2, 20, 64), torch.bfloat16, device)
    run("triton", args, do, True)  # on the GPU the first call autotunes, launching each kernel many times
    counts = count_launches(monkeypatch, FA)
    run("triton", args, do, True)
    once = dict(counts)
    assert all(n == 1 for n in once.values()), once  # forward, dQ (with delta), dK dV
    run("torch", args, do, True)
    assert counts == once
    run("auto", args, do, True)
    assert all(n == 2 for n in counts.values()), counts


@pytest.mark.parametrize("case, match", [
    ("fp64", "float64"), ("fp32", "float32"), ("dropout", "dropout"), ("head_dim_80", "head dim 80"),
    ("lengths_differ", "shapes")])
def test_fallbacks(case, match, monkeypatch, capsys, device):
    """'auto' sends what the kernels do not take to SDPA with one printed line (once per
    reason); 'triton' refuses it."""
    monkeypatch.setattr(backend, "_said", set())
    counts = count_launches(monkeypatch, FA)
    dtype = {"fp64": torch.float64, "fp32": torch.float32}.get(case, torch.bfloat16)
    D = 80 if case == "head_dim_80" else 64
    q, k, v = (torch.randn(1, 2, 24, D, device=device).to(dtype) for _ in range(3))
    if case == "lengths_differ":
        k, v = k[:, :, :20], v[:, :, :20]
    dropout_p = 0.5 if case == "dropout" else 0.0
    for _ in range(2):
        torch.manual_seed(0)
        got = kernels.flash_attention(q, k, v, causal=False, dropout_p=dropout_p)
    torch.manual_seed(0)
    want = kernels.flash_attention_ref(q, k, v, causal=False, dropout_p=dropout_p)
    assert torch.equal(got, want)  # SDPA itself (with dropout: the same mask from the same seed)
    assert not any(counts.values())
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "flash_attention" in lines[0] and match in lines[0], lines
    with pytest.raises(RuntimeError, match=match if case != "fp64" else "dtype"):
        kernels.flash_attention(q, k, v, causal=False, dropout_p=dropout_p, backend="triton")


@pytest.mark.parametrize("backend_name", ["auto", "triton"])
def test_mixed_dtypes_raise_as_sdpa_does(backend_name, device):
    q, k, v = (torch.randn(1, 2, 24, 64, device=device) for _ in range(3))
    with pytest.raises(RuntimeError, match="dtype"):
        kernels.flash_attention(q, k.bfloat16(), v.bfloat16(), backend=backend_name)


def test_plain_cpu_falls_back_quietly(monkeypatch, capsys, device):
    if device == "cuda":
        pytest.skip("CUDA tensors never need the interpreter")
    monkeypatch.setattr(backend, "INTERPRET", False)
    (q, k, v), _ = make_inputs((1, 2, 1, 10, 64), torch.bfloat16, device)
    assert torch.equal(kernels.flash_attention(q, k, v), kernels.flash_attention_ref(q, k, v))
    assert capsys.readouterr().out == ""
    with pytest.raises(RuntimeError, match="CUDA"):
        kernels.flash_attention(q, k, v, backend="triton")


# ---------------------------------------------------------------- torch.compile, memory

@pytest.mark.parametrize("packed", [False, True], ids=["q_k_v", "qkv"])
def test_torch_compile_fullgraph(packed, device):
    torch._dynamo.reset()
    (q, k, v), do = make_inputs((1, 4, 2, 40, 64), torch.bfloat16, device)
    inputs = (torch.cat([q, k, v], dim=1).transpose(1, 2).contiguous(),) if packed else (q, k, v)
    attend = (lambda qkv: kernels.flash_attention_qkv(qkv, 4, backend="triton")) if packed else (
        lambda q, k, v: kernels.flash_attention(q, k, v, backend="triton"))

    def f(*args):
        o = attend(*args[:-1])
        return o, (o.float() * args[-1].float()).sum()

    compiled = torch.compile(f, fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    results = []
    for fn in (f, compiled):
        leaves = [t.detach().clone().requires_grad_() for t in inputs]
        o, loss = fn(*leaves, do)
        loss.backward()
        results.append((o.detach(), *(t.grad for t in leaves)))
    for name, e, c in zip(("o", "dqkv") if packed else NAMES, *results):
        torch.testing.assert_close(c, e, msg=lambda m: f"{name}: {m}")
    torch._dynamo.reset()


@pytest.mark.skipif(not CUDA, reason="peak memory is measured by the CUDA caching allocator")
def test_memory_grows_as_T_not_T_squared():
    """Forward and backward at T = 8192 allocate a few tensors of q's size; one head's
    T x T scores alone would be 128 MiB in bf16 (all 16 heads: 2 GiB)."""
    (q, k, v), do = make_inputs((1, 16, 16, 8192, 64), torch.bfloat16, "cuda")
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    kernels.flash_attention(q, k, v, backend="triton").backward(do)  # autotuning allocates a 256 MiB scratch
    q.grad = k.grad = v.grad = None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    kernels.flash_attention(q, k, v, backend="triton").backward(do)
    torch.cuda.synchronize()
    grown = torch.cuda.max_memory_allocated() - start
    assert grown <= 6 * q.nbytes, f"{grown / 2**20:.0f} MiB for q of {q.nbytes / 2**20:.0f} MiB"


# ---------------------------------------------------------------- the H100 build

KERNEL_OF_PASS = {"fwd": "_flash_attention_fwd_kernel", "dq": "_flash_attention_bwd_dq_kernel",
                  "dkdv": "_flash_attention_bwd_dkdv_kernel"}
# (pass, head dim, causal, GQA ratio): the dK dV kernel alone compiles per GQA ratio
BUILDS = [(p, d, c, 1) for p in KERNEL_OF_PASS
          for d, c in ((64, True), (64, False), (128, True))] + [("dkdv", 64, True, 3)]


@pytest.fixture(scope="module")
def sm90_reports():
    """ptxas's report of each build, {build: report}, all built in one process by tests/sm90_ptxas.py (without the
    interpreter; it exits with ptxas's message where ptxas refuses the PTX)."""
    builds = [(KERNEL_OF_PASS[p], *FA.CONFIGS[p][d][0], d, c, g) for p, d, c, g in BUILDS]  # the first candidate
    code = ("import json, sys, sm90_ptxas\n"
            "print(json.dumps([sm90_ptxas.ptxas_report(*b) for b in json.loads(sys.argv[1])]))")
    p = subprocess.run([sys.executable, "-c", code, json.dumps(builds)], cwd=os.path.dirname(__file__),
                       capture_output=True, text=True)
    assert p.returncode == 0, f"exit {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    return dict(zip(BUILDS, json.loads(p.stdout.splitlines()[-1])))


@pytest.mark.xdist_group("sm90_reports")  # the module fixture made once (.ci/run: --dist loadgroup)
@pytest.mark.parametrize("build", BUILDS, ids=[f"{p}-d{d}-{'causal' if c else 'full'}-gqa{g}" for p, d, c, g in BUILDS])
def test_h100_build_keeps_wgmma_async(build, sm90_reports):
    """On some loop orders ptxas serializes every wgmma of a kernel (its warning C7515):
    the dK dV kernel with its masked loop first lost 10% that way. Built for sm_90a with
    the first candidate config, by Triton's compiler and its ptxas, on any machine."""
    report = sm90_reports[build]
    assert "Used" in report and "registers" in report, report  # ptxas built it
    assert "serialized" not in report, report
