"""
Tests of kernels.linear_cross_entropy: the loss and dx, dweight against PyTorch's
F.cross_entropy of the logits in the same dtype and a float64 reference (the three-way
rule), over vocabularies that are not multiples of any block (65, 257, 1000; 50257 and
50304 on the GPU), rows split over several chunks, ignored rows and all rows ignored,
softcap and z-loss, mean and sum; a weight tied to the embedding; autocast;
torch.compile; memory bounded by a chunk.
"""
import importlib

import pytest
import torch

import kernels
from conftest import DTYPES, check_3way_all, double, forward_backward, dtype_id

LCE = importlib.import_module("kernels.linear_cross_entropy")
MM = importlib.import_module("kernels.matmul")
CUDA = torch.cuda.is_available()

# (N rows, H hidden, V vocabulary)
# V = 1000: rows 16-byte aligned, so on the GPU the products go to cuBLASLt (kernels/matmul.py): in one chunk,
# with a short last chunk, in chunks of one size
SHAPES = [(1, 16, 65), (8, 64, 1000), (37, 32, 257), (37, 48, 1000), (64, 48, 1000)] + (
    [(1000, 768, 50257), (2048, 768, 50304)] if CUDA else [])
# keyword options: (ignore_index, reduction, softcap, z_loss)
OPTIONS = {
    "mean": dict(),
    "sum": dict(reduction="sum"),
    "softcap-zloss": dict(softcap=2.0, z_loss=1e-2),
    "ignore-100": dict(ignore_index=-100),
}
NAMES = ("loss", "dx", "dweight")


def make_inputs(N, H, V, dtype, device, ignore_index=-1, ignored=0.25):
    x = torch.randn(N, H, device=device).to(dtype)
    weight = (torch.randn(V, H, device=device) * H ** -0.5).to(dtype)  # logits of unit scale
    targets = torch.randint(0, V, (N,), device=device)
    targets[torch.rand(N, device=device) < ignored] = ignore_index
    return x, weight, targets


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 8 rows (the smallest the kernel makes), so every shape but one row crosses chunk boundaries."""
    monkeypatch.setattr(LCE, "_chunk_rows", lambda N, V, itemsize, chunk_bytes: 8)


def run(x, weight, targets, backend, dloss, **options):
    fn = lambda x, weight: kernels.linear_cross_entropy(x, weight, targets, backend=backend, **options)
    return forward_backward(fn, [x, weight], [dloss])


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("option", OPTIONS)
def test_matches_reference(dtype, shape, option, device, small_chunks):
    options = OPTIONS[option]
    x, weight, targets = make_inputs(*shape, dtype, device, ignore_index=options.get("ignore_index", -1))
    dloss = torch.tensor(1.7, device=device)  # the backward scales by the incoming gradient
    got = run(x, weight, targets, "triton", dloss, **options)
    want = run(x, weight, targets, "torch", dloss, **options)
    ref = run(*double([x, weight]), targets, "torch", dloss.double(), **options)
    check_3way_all(NAMES, got, want, ref)


@pytest.mark.parametrize("chunk_bytes", [1, 2**30])
def test_chunk_bytes_sets_the_chunks(chunk_bytes, device, monkeypatch):
    """The rows go in chunks of at most chunk_bytes of logits (8 rows at least), and the result
    holds to the three-way rule either way."""
    rows_of, chunks = LCE._chunk_rows, []
    monkeypatch.setattr(LCE, "_chunk_rows", lambda *args: chunks.append(rows_of(*args)) or chunks[-1])
    x, weight, targets = make_inputs(37, 32, 257, torch.bfloat16, device)
    dloss = torch.tensor(1.0, device=device)
    got = run(x, weight, targets, "triton", dloss, chunk_bytes=chunk_bytes)
    want = run(x, weight, targets, "torch", dloss, chunk_bytes=chunk_bytes)
    ref = run(*double([x, weight]), targets, "torch", dloss.double())
    check_3way_all(NAMES, got, want, ref)
    assert chunks == [8 if chunk_bytes == 1 else 40]  # 37 rows: 5 chunks of 8, or one of 37 (rounded up to 8s)


# (rows of 257 bf16 words that CHUNK_BYTES holds, CHUNK_ROWS, the chunk's rows for 37 rows)
@pytest.mark.parametrize("bytes_rows, least_rows, rows", [(20, 8, 16), (10, 16, 16), (10, 8, 8)])
def test_default_chunk_is_the_bytes_or_the_rows_whichever_is_more(bytes_rows, least_rows, rows, device, monkeypatch):
    """chunk_bytes=None: CHUNK_BYTES of logits, or CHUNK_ROWS rows where a row is so wide that
    fewer would fit. 37 rows: the bytes' 20 rows (16 in 8s: 3 chunks of 13, rounded up to 16);
    the rows' 16 over the bytes' 10 (the same); 10 over 8 (8 in 8s: 5 chunks of 8)."""
    rows_of, chunks = LCE._chunk_rows, []
    monkeypatch.setattr(LCE, "_chunk_rows", lambda *args: chunks.append(rows_of(*args)) or chunks[-1])
    monkeypatch.setattr(LCE, "CHUNK_BYTES", bytes_rows * 257 * 2)
    monkeypatch.setattr(LCE, "CHUNK_ROWS", least_rows)
    x, weight, targets = make_inputs(37, 32, 257, torch.bfloat16, device)
    kernels.linear_cross_entropy(x, weight, targets, backend="triton")
    assert chunks == [rows]


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_all_rows_ignored_give_zero_not_nan(reduction, device):
    x, weight, targets = make_inputs(5, 16, 65, torch.bfloat16, device, ignored=1.0)
    (loss,), (dx, dweight) = run(x, weight, targets, "triton", torch.tensor(1.0, device=device), reduction=reduction)
    assert loss.item() == 0.0 and not dx.any() and not dweight.any()


@pytest.mark.parametrize("layout", ["column", "strided", "expanded"])
def test_targets_of_any_layout(layout, device, small_chunks):
    """Targets that are a view (a column of a batch, every other id, one id broadcast) read as the ids they hold."""
    x, weight, _ = make_inputs(37, 32, 257, torch.float32, device)
    batch = torch.randint(0, 257, (37, 10), device=device)
    targets = {"column": batch[:, -1:], "strided": batch.reshape(-1)[::10],
               "expanded": torch.tensor(7, device=device).expand(37)}[layout]
    dloss = torch.tensor(1.0, device=device)
    check_3way_all(NAMES, run(x, weight, targets, "triton", dloss), run(x, weight, targets, "torch", dloss),
                   run(*double([x, weight]), targets, "torch", dloss.double()))
    with pytest.raises(ValueError, match="contiguous"):  # the launcher's own check
        LCE.linear_cross_entropy_fwd(x, weight, targets.reshape(-1), -1, None, 0.0, 2**20, False)


def test_out_of_range_target_makes_the_loss_nan(device):
    x, weight, targets = make_inputs(5, 16, 65, torch.float32, device, ignored=0.0)
    targets[2] = 65
    assert kernels.linear_cross_entropy(x, weight, targets, backend="triton").isnan()


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", SHAPES[1:3], ids=lambda s: "x".join(map(str, s)))
def test_without_grad_mode_only_the_logits_are_made(dtype, shape, device, small_chunks, monkeypatch):
    """An evaluation's forward (no grad mode) gives grad mode's loss, bit for bit, from the chunks' logits
    products alone: no dx or dW product is planned."""
    x, weight, targets = make_inputs(*shape, dtype, device)
    with_grads = kernels.linear_cross_entropy(x, weight.requires_grad_(), targets, backend="triton")
    planned = []  # each product's output shape: (rows, V) logits, (rows, H) dx, (V, H) dW
    monkeypatch.setattr(LCE, "matmul_plan", lambda a, b, out, beta=0.0: planned.append(tuple(out.shape))
                        or MM.matmul_plan(a, b, out, beta))
    with torch.no_grad():
        alone = kernels.linear_cross_entropy(x, weight, targets, backend="triton")
    assert torch.equal(alone, with_grads.detach())
    assert planned and {shape[1] for shape in planned} == {weight.shape[0]}


def test_weight_tied_to_the_embedding(device, small_chunks):
    """GPT-2's LM head is the token embedding: both gradients add up in one .grad."""
    V, H, N = 257, 32, 40
    idx = torch.randint(0, V, (N,), device=device)
    targets = torch.randint(0, V, (N,), device=device)
    wte = torch.randn(V, H, device=device)
    grads = []
    for backend in ("triton", "torch"):
        w = wte.clone().requires_grad_()
        h = torch.tanh(w[idx] * 1.5)  # some computation between the embedding and the head
        kernels.linear_cross_entropy(h, w, targets, backend=backend).backward()
        grads.append(w.grad)
    torch.testing.assert_close(grads[0], grads[1])


def test_autocast_casts_like_a_matmul(device, small_chunks):
    x, weight, targets = make_inputs(37, 32, 257, torch.float32, device)
    with torch.autocast(device, dtype=torch.bfloat16):
        got = run(x, weight, targets, "triton", torch.tensor(1.0, device=device))
        want = run(x, weight, targets, "torch", torch.tensor(1.0, device=device))
    ref = run(*double([x, weight]), targets, "torch", torch.tensor(1.0, device=device).double())
    assert got[1][1].dtype == torch.float32  # the fp32 parameter's gradient
    check_3way_all(NAMES, got, want, ref)


def test_autocast_weight_gradient_comes_from_the_fp32_sum(device, small_chunks):
    """Under autocast the op casts the fp32 weight itself, so its gradient is the fp32 sum of the
    chunks' products, not that sum rounded to bf16 and cast back (autocast's ToCopyBackward)."""
    x, weight, targets = make_inputs(37, 32, 257, torch.float32, device)
    weight.requires_grad_()
    with torch.autocast(device, dtype=torch.bfloat16):
        loss = kernels.linear_cross_entropy(x, weight, targets, backend="triton")
    assert "ToCopyBackward" not in type(loss.grad_fn.next_functions[1][0]).__name__
    loss.backward()
    assert weight.grad.dtype == torch.float32
    assert (weight.grad.to(torch.bfloat16).float() != weight.grad).any()


def test_mixed_dtypes_without_autocast_raise(device):
    x, weight, targets = make_inputs(5, 16, 65, torch.float32, device)
    with pytest.raises(ValueError, match="x is torch.bfloat16, weight torch.float32"):
        kernels.linear_cross_entropy(x.bfloat16(), weight, targets, backend="triton")


def test_unfused_cross_entropy_is_the_reference_in_fp32_and_near_it_under_autocast(device):
    """The model's PyTorch path (nanoGPT's head and loss) on (B, T, H) hidden states with ignored
    rows: the op's reference in fp32; under bf16 autocast (on CUDA its log-softmax writes bf16; CPU
    autocast computes it in fp32) the loss moves by bf16 rounding, not more."""
    x, weight, targets = make_inputs(2 * 37, 32, 257, torch.float32, device)
    x, targets = x.view(2, 37, 32).requires_grad_(), targets.view(2, 37)
    weight.requires_grad_()
    unfused = kernels.unfused_cross_entropy(x, weight, targets)
    ref = LCE.linear_cross_entropy_ref(x, weight, targets)
    torch.testing.assert_close(unfused, ref)
    for got, want in zip(torch.autograd.grad(unfused, (x, weight)), torch.autograd.grad(ref, (x, weight))):
        torch.testing.assert_close(got, want)
    with torch.autocast(device, dtype=torch.bfloat16):
        bf16 = kernels.unfused_cross_entropy(x, weight, targets)
    exact = LCE.linear_cross_entropy_ref(*double([x, weight]), targets)
    assert bf16.dtype == torch.float32 and abs(bf16.double() - exact).item() < 2 ** -9 * exact.item()


@pytest.mark.parametrize("backend_name", ["auto", "triton"])
def test_reduction_none_goes_to_pytorch(backend_name, device, capsys):
    x, weight, targets = make_inputs(9, 16, 65, torch.float32, device)
    if backend_name == "triton":
        with pytest.raises(RuntimeError, match="reduction"):
            kernels.linear_cross_entropy(x, weight, targets, reduction="none", backend="triton")
        return
    got = kernels.linear_cross_entropy(x, weight, targets, reduction="none")
    torch.testing.assert_close(got, LCE.linear_cross_entropy_ref(x, weight, targets, reduction="none"))
    assert "reduction='none'" in capsys.readouterr().out


def test_torch_compile_fullgraph(device):
    torch._dynamo.reset()
    x, weight, targets = make_inputs(37, 32, 257, torch.bfloat16, device)
    f = lambda x, weight: kernels.linear_cross_entropy(x, weight, targets, softcap=5.0, backend="triton")
    compiled = torch.compile(f, fullgraph=True, backend="inductor" if device == "cuda" else "aot_eager")
    dloss = torch.tensor(1.0, device=device)
    eager, comp = forward_backward(f, [x, weight], [dloss]), forward_backward(compiled, [x, weight], [dloss])
    for name, e, c in zip(NAMES, eager[0] + eager[1], comp[0] + comp[1]):
        torch.testing.assert_close(c, e, msg=lambda m: f"{name}: {m}")
    torch._dynamo.reset()


@pytest.mark.skipif(not CUDA, reason="peak memory is measured by the CUDA caching allocator")
@pytest.mark.parametrize("chunk_bytes", [None, 400 * 2**20], ids=lambda b: f"{b >> 20}MiB" if b else "default")
def test_memory_is_a_chunk_not_the_logits(chunk_bytes):
    """GPT-2's head at 12 x 1024 tokens: the bf16 logits alone would be 1.2 GB."""
    x, weight, targets = make_inputs(12288, 768, 50304, torch.bfloat16, "cuda")
    x.requires_grad_(), weight.requires_grad_()
    # warm-up: compiles
    kernels.linear_cross_entropy(x, weight, targets, chunk_bytes=chunk_bytes, backend="triton").backward()
    x.grad = weight.grad = None
    chunk = chunk_bytes or LCE.chunk_bytes_for(weight.shape[0], x.element_size(), LCE.CHUNK_BYTES, LCE.CHUNK_ROWS)
    # the workspace of the warm-up's chosen products, where one is split-K (the plans are kept: no measuring here)
    rows = LCE._chunk_rows(x.shape[0], weight.shape[0], x.element_size(), chunk)
    plans = LCE._chunk_products(x.detach(), weight.detach(), torch.empty(rows, weight.shape[0], device="cuda",
                                dtype=x.dtype), torch.empty_like(x), torch.empty(weight.shape, device="cuda"), rows)
    workspace = max(p.algos[p.chosen].workspace if isinstance(p, MM._LtPlan) else 0
                    for products in plans.values() for p in products)
    del plans
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    kernels.linear_cross_entropy(x, weight, targets, chunk_bytes=chunk_bytes, backend="triton").backward()
    torch.cuda.synchronize()
    grown = torch.cuda.max_memory_allocated() - start
    # forward: the chunk buffer, dweight in fp32, dx, a product's workspace; backward: the fp32 dweight and dx
    # saved, and both scaled into new tensors (dweight in bf16); a few MiB for the rows' losses and slack
    forward = chunk + weight.numel() * 4 + x.nbytes + workspace
    backward = weight.numel() * (4 + 2) + 2 * x.nbytes
    bound = max(forward, backward) + 4 * 2**20
    assert grown <= bound, f"{grown / 2**20:.0f} MiB > {bound / 2**20:.0f} MiB"
