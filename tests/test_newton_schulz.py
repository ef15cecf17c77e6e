"""
Tests of kernels.newton_schulz: the symmetric product kernel (alpha X X^T + beta C +
gamma I, one triangle of tiles mirrored) and the whole iteration, against PyTorch's bf16 iteration
and the same iteration in float64 (the three-way rule), over square, wide, tall and
stacked matrices, one row, sizes that are not multiples of the tile; GPT-2's stacks on
the GPU. And the point of it all: the singular values come out near 1.
"""
import importlib

import pytest
import torch

import kernels
from conftest import DTYPES, assert_close_3way, dtype_id

NS = importlib.import_module("kernels.newton_schulz")
CUDA = torch.cuda.is_available()

# (B, M, K): rows of X, whose dot products make the (M, M) result
GRAM_SHAPES = [(1, 1, 50), (1, 40, 24), (3, 33, 65)] + ([(24, 768, 3072), (12, 768, 768)] if CUDA else [])
# matrices or stacks G: square, wide, tall, stacked, one row
SHAPES = [(40, 40), (24, 72), (72, 24), (3, 33, 50), (1, 50)] + (
    [(12, 2304, 768), (12, 768, 768), (24, 768, 3072)] if CUDA else [])
shape_id = lambda s: "x".join(map(str, s))


@pytest.mark.parametrize("scaled", [False, True], ids=["", "scaled"])
@pytest.mark.parametrize("with_c", [False, True], ids=["XXt", "cXXt+bC+aI"])
@pytest.mark.parametrize("shape", GRAM_SHAPES, ids=shape_id)
def test_gram_matches_reference(shape, with_c, scaled, device):
    X = torch.randn(shape, device=device).bfloat16()
    a, b, c = NS.COEFFICIENTS
    alpha, beta, gamma = (c, b, a) if with_c else (1.0, 0.0, 0.0)
    C = None
    if with_c:  # a symmetric C, as A = X X^T is
        S = torch.randn(shape[0], shape[1], shape[1], device=device)
        C = (S + S.mT).bfloat16()
    # a scale per matrix from sums of squares in parts, squared for X X^T (as the first step's 1 / norm is)
    sumsq, power = (torch.rand(shape[0], 3, device=device) + 0.5, 1 if with_c else 2) if scaled else (None, 1)
    got = NS.newton_schulz_gram(X, alpha, C, beta, gamma, sumsq, power)
    eye = torch.eye(shape[1], device=device)
    s = (1 / (sumsq.double().sum(1).sqrt() + NS.EPS))[:, None, None] ** power if scaled else 1.0
    want = s * (alpha * X.float() @ X.float().mT + (beta * C.float() + gamma * eye if with_c else 0))
    ref = s * (alpha * X.double() @ X.double().mT + (beta * C.double() + gamma * eye.double() if with_c else 0))
    assert torch.equal(got, got.mT), "the mirrored tiles must make an exactly symmetric result"
    assert_close_3way("gram", got, want.bfloat16(), ref)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_matches_reference_iteration(shape, dtype, device):
    G = torch.randn(shape, device=device).to(dtype)
    got = kernels.newton_schulz(G, backend="triton")
    want = kernels.newton_schulz(G, backend="torch")
    ref = NS.newton_schulz_ref(G.double(), dtype=torch.float64)
    assert got.shape == G.shape and got.dtype == torch.bfloat16
    assert_close_3way("newton_schulz", got, want, ref)


def _spectrum(kind, B, M, N, device):
    """B matrices M x N (M <= N) with singular values spread over four decades, or of rank 16 over a
    floor of 1e-3: where Newton-Schulz steps grouped in Gram space would lose digits first."""
    U = torch.linalg.qr(torch.randn(B, M, M, device=device))[0]
    V = torch.linalg.qr(torch.randn(B, N, M, device=device))[0]
    if kind == "spread":
        s = 10 ** (-4 * torch.rand(B, M, device=device))
    else:
        s = torch.full((B, M), 1e-3, device=device)
        s[:, :16] = 1.0
    return (U * s[:, None, :]) @ V.mT


@pytest.mark.parametrize("kind", ["spread", "low rank"])
@pytest.mark.parametrize("shape", [(2, 40, 120), (2, 120, 40)] + ([(4, 768, 3072), (4, 2304, 768)] if CUDA else []),
                         ids=shape_id)
def test_grouped_steps_on_hard_spectra(shape, kind, device):
    B, rows, cols = shape
    G = _spectrum(kind, B, min(rows, cols), max(rows, cols), device)
    G = G if rows <= cols else G.mT
    got = kernels.newton_schulz(G, backend="triton")
    want = kernels.newton_schulz(G, backend="torch")
    ref = NS.newton_schulz_ref(G.double(), dtype=torch.float64)
    assert_close_3way("newton_schulz", got, want, ref)


@pytest.mark.parametrize("shape", [(72, 24), (3, 33, 50)], ids=shape_id)
def test_singular_values_near_one(shape, device):
    """The quintic's fixed point is not 1 but a band around it (about 0.7 to 1.2)."""
    G = torch.randn(shape, device=device)
    s = torch.linalg.svdvals(kernels.newton_schulz(G, backend="triton").double())
    assert s.min() > 0.6 and s.max() < 1.25, f"singular values in [{s.min():.3f}, {s.max():.3f}]"


@pytest.mark.parametrize("shape", GRAM_SHAPES[1:], ids=shape_id)
def test_gram_of_two_commuting_matrices(shape, device):
    """X Y^T with Y != X, as the grouped steps use it: X = S^2 and Y = S for a symmetric S
    commute, so X Y^T = S^3 is symmetric. Bf16 rounding of X and Y leaves the exact product
    of the rounded inputs a little asymmetric: its lower triangle is what the kernel makes."""
    B, M, _ = shape
    S = torch.randn(B, M, M, device=device)
    S = ((S + S.mT) / (2 * M) ** 0.5).double()
    X, Y = (S @ S).bfloat16(), S.bfloat16()
    got = NS.newton_schulz_gram(X, Y=Y)
    want = (X.float() @ Y.float().mT).bfloat16()
    ref = X.double() @ Y.double().mT
    assert torch.equal(got, got.mT), "the mirrored tiles must make an exactly symmetric result"
    assert_close_3way("gram X Y^T", got.tril(), want.tril(), ref.tril())


def test_grouped_steps_are_taken(device, monkeypatch):
    """Wide matrices go three steps, then two, at a time (ten gram launches: A0, then P, P^2,
    the next A, and the product of the P's; six; one bmm each), a square one five single
    steps (two each: A, P)."""
    launches = []
    gram = NS.newton_schulz_gram
    monkeypatch.setattr(NS, "newton_schulz_gram", lambda *a, **k: launches.append("gram") or gram(*a, **k))
    for shape, steps, want in [((2, 8, 40), 5, 10 + 6), ((2, 8, 40), 6, 10 + 6 + 2), ((2, 8, 8), 5, 5 * 2)]:
        launches.clear()
        kernels.newton_schulz(torch.randn(shape, device=device), steps, backend="triton")
        assert len(launches) == want, f"{shape}, {steps} steps: {len(launches)} gram launches"


def test_steps_and_shapes_are_checked(device):
    G = torch.randn(4, 6, device=device)
    X = G.bfloat16()  # no step: the input in bf16 over its norm
    assert torch.equal(kernels.newton_schulz(G, steps=0, backend="triton"), X / (X.norm() + NS.EPS))
    with pytest.raises(RuntimeError, match="is not"):
        kernels.newton_schulz(torch.randn(2, 2, 3, 4, device=device), backend="triton")
    for shape in [(2, 2, 3, 4), (0, 5), (2, 0, 5)]:  # 'auto' gives them to PyTorch: each matrix on its own
        G = torch.randn(shape, device=device)
        want = torch.stack([NS.newton_schulz_ref(g) for g in (G.flatten(0, -3) if G.dim() > 2 else G[None])])
        assert torch.equal(kernels.newton_schulz(G), want.reshape(shape))
