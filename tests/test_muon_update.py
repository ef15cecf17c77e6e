"""
Tests of kernels/muon_update.py, the elementwise halves of a Muon step: the momentum and
stacking before Newton-Schulz, applying its result after. Three-way against PyTorch's
foreach reference in the same dtype and the same arithmetic in float64, over sets of
matrices of one shape up to transposition (tall ones are read and written transposed),
one row, wider than a tile, fp32/bf16/fp16; GPT-2's shapes on the GPU.
"""
import pytest
import torch

import kernels
from conftest import DTYPES, assert_close_3way, dtype_id

CUDA = torch.cuda.is_available()
# each case: the shapes of one call's matrices
CASES = [[(33, 50), (50, 33), (33, 50)], [(1, 50)], [(70, 130), (130, 70)], [(17, 17)]] + (
    [[(768, 3072), (3072, 768)], [(2304, 768)]] if CUDA else [])
case_id = lambda c: "+".join("x".join(map(str, s)) for s in c)


def matrices(shapes, dtype, device, scale=1.0):
    return [(torch.randn(s, device=device) * scale).to(dtype) for s in shapes]


@pytest.mark.parametrize("nesterov", [True, False], ids=["nesterov", "plain"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shapes", CASES, ids=case_id)
def test_momentum_matches_reference(shapes, dtype, nesterov, device):
    grads, bufs = matrices(shapes, dtype, device), matrices(shapes, dtype, device)
    run = lambda gs, bs, backend: (kernels.muon_momentum(gs, bs, 0.95, nesterov, backend=backend), bs)
    (U, sumsq), B = run(grads, [b.clone() for b in bufs], "triton")
    (U_torch, _), B_torch = run(grads, [b.clone() for b in bufs], "torch")
    B_ref = [b.double().lerp(g.double(), 1 - 0.95) for g, b in zip(grads, bufs)]
    U_ref = [g.double().lerp(b, 0.95) if nesterov else b for g, b in zip(grads, B_ref)]
    U_ref = torch.stack([u.mT if u.size(0) > u.size(1) else u for u in U_ref])
    assert U.dtype == torch.bfloat16 and U.shape == U_torch.shape
    assert_close_3way("U", U, U_torch, U_ref)
    # the parts add up to each matrix's ||U||^2, U as stored (bf16): fp32 sums of exact squares
    want = U.double().square().sum((-2, -1))
    torch.testing.assert_close(sumsq.double().sum(1), want, rtol=U[0].numel() * 2 ** -24, atol=0)
    for i, (b, bt, br) in enumerate(zip(B, B_torch, B_ref)):
        assert_close_3way(f"buffer {i}", b, bt, br)


@pytest.mark.parametrize("weight_decay", [0.0, 0.1], ids=["no-wd", "wd"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shapes", CASES, ids=case_id)
def test_apply_matches_reference(shapes, dtype, weight_decay, device):
    params = matrices(shapes, dtype, device)
    M, N = sorted(shapes[0])
    O = torch.randn(len(shapes), M, N, device=device).bfloat16() * N ** -0.5
    lr = 0.02

    def run(backend):
        ps = [p.clone() for p in params]
        kernels.muon_apply(ps, O, lr, weight_decay, backend=backend)
        return ps
    got, want = run("triton"), run("torch")
    for i, (p, g, w) in enumerate(zip(params, got, want)):
        o = O[i].double().mT if p.size(0) > p.size(1) else O[i].double()
        ref = p.double() * (1 - lr * weight_decay) - lr * max(1, p.size(0) / p.size(1)) ** 0.5 * o
        # the change, not the weight: rounding the weight itself would hide an error in the update
        assert_close_3way(f"weight {i}", g.double() - p.double(), w.double() - p.double(), ref - p.double())


def test_unsupported_inputs_fail_loudly_or_fall_back(device):
    grads = [torch.randn(8, 12, device=device), torch.randn(8, 13, device=device)]
    bufs = [torch.zeros_like(g) for g in grads]
    with pytest.raises(RuntimeError, match="more than one shape"):
        kernels.muon_momentum(grads, bufs, 0.95, backend="triton")
    with pytest.raises(RuntimeError, match="not all contiguous"):
        kernels.muon_apply([torch.randn(12, 8, device=device).mT], torch.zeros(1, 8, 12, device=device).bfloat16(),
                           0.02, backend="triton")
