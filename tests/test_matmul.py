"""
Tests of kernels.matmul: a plan's out = a @ b + beta * out against float64 and PyTorch's own product in the same
dtypes (the three-way rule), over shapes that are not powers of two, one row, wider than any tile and GPT-2's real
ones (the fused loss's chunk products), a and b row-major or transposed, beta 0 and 1, out in the inputs' dtype or
fp32, by the plan's choice and by each algorithm cuBLASLt offers; which problems cuBLASLt takes (on the GPU) and
which go to PyTorch; one measuring per problem; a plan made inside a CUDA graph's capture.
"""
import importlib

import pytest
import torch

from conftest import assert_close_3way, dtype_id

MM = importlib.import_module("kernels.matmul")
CUDA = torch.cuda.is_available()
LOW = [torch.bfloat16, torch.float16]

# (M, K, N): one row; odd sizes; wider than a tile; K far larger than M and N
SHAPES = [(1, 64, 40), (40, 24, 72), (300, 136, 520), (8, 4096, 8)]
# the fused loss's chunk products at GPT-2's head (2048 rows), in bf16 and the layouts it runs them in
GPT2 = {(2048, 768, 50304): "nt", (2048, 50304, 768): "nn", (50304, 2048, 768): "tn"} if CUDA else {}
# (input dtype, out dtype)
DTYPE_PAIRS = [(torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32), (torch.float16, torch.float16),
               (torch.float16, torch.float32), (torch.float32, torch.float32)]
case_id = lambda c: ("x".join(map(str, c)) if isinstance(c[0], int) else "-".join(map(dtype_id, c))) \
    if isinstance(c, tuple) else c  # a shape, a dtype pair, a layout
CASES = [(shape, layout, dtypes) for shape in SHAPES for layout in ("nn", "tn", "nt") for dtypes in DTYPE_PAIRS] + [
    (shape, layout, dtypes) for shape, layout in GPT2.items() for dtypes in DTYPE_PAIRS[:2]]


def operands(M, K, N, dtype, device, a_t, b_t, out_dtype, beta):
    """a (M, K) and b (K, N), each row-major or a transposed view; out (M, N), random where beta reads it."""
    a = (torch.randn(K, M, device=device).T if a_t else torch.randn(M, K, device=device)).to(dtype)
    b = (torch.randn(N, K, device=device).T if b_t else torch.randn(K, N, device=device)).to(dtype) * K ** -0.5
    out = torch.randn(M, N, device=device).to(out_dtype) if beta else torch.empty(M, N, device=device, dtype=out_dtype)
    return a, b, out


@pytest.mark.parametrize("beta", [0.0, 1.0])
@pytest.mark.parametrize("shape,layout,dtypes", CASES,
                         ids=case_id)
def test_plan_against_float64(shape, layout, dtypes, beta, device):
    (M, K, N), (dtype, out_dtype) = shape, dtypes
    a, b, out = operands(M, K, N, dtype, device, layout[0] == "t", layout[1] == "t", out_dtype, beta)
    want = a.double() @ b.double() + (beta * out.double() if beta else 0)  # out may hold NaN where beta is 0
    torch_out = MM.matmul_ref(a, b, out.clone(), beta)
    plan = MM.matmul_plan(a, b, out.clone(), beta)  # measuring writes into the out it is given
    got = plan(a, b, out.clone())
    assert_close_3way("out", got, torch_out, want)


@pytest.mark.skipif(not CUDA, reason="cuBLASLt needs CUDA")
@pytest.mark.parametrize("beta", [0.0, 1.0])
@pytest.mark.parametrize("shape,layout,dtypes", [c for c in CASES if c[2][0] != torch.float32],
                         ids=case_id)
def test_every_admitted_algorithm_against_float64(shape, layout, dtypes, beta):
    """Whichever algorithm the measuring picks, each one cuBLASLt offers and the plan admits must be right."""
    (M, K, N), (dtype, out_dtype) = shape, dtypes
    a, b, out = operands(M, K, N, dtype, "cuda", layout[0] == "t", layout[1] == "t", out_dtype, beta)
    want = a.double() @ b.double() + (beta * out.double() if beta else 0)
    torch_out = MM.matmul_ref(a, b, out.clone(), beta)
    plan = MM._LtPlan(MM._cublaslt(), a, b, out, beta)
    admitted = plan.admissible(a, b, out.clone(), None, lambda a, b, out, aux: MM.matmul_ref(a, b, out, beta))
    assert admitted
    for i in admitted:
        given = out.clone() if beta else torch.full_like(out, float("nan"))  # beta 0 must not read out
        assert_close_3way(f"out, algorithm {i}", plan.run(plan.algos[i], a, b, given), torch_out, want)


@pytest.mark.skipif(not CUDA, reason="cuBLASLt needs CUDA")
def test_an_algorithm_off_by_more_than_the_rule_is_not_admitted(monkeypatch):
    a, b, out = operands(300, 136, 520, torch.bfloat16, "cuda", False, True, torch.float32, 0.0)
    plan = MM._LtPlan(MM._cublaslt(), a, b, out, 0.0)
    run = MM._LtPlan.run
    off = lambda self, algo, a, b, out, aux: run(self, algo, a, b, out, aux).mul_(1 + 1e-5 * (algo is plan.algos[0]))
    monkeypatch.setattr(MM._LtPlan, "run", off)  # algorithm 0 off by 1e-5 of each value: ~80 fp32 units
    admitted = plan.admissible(a, b, out, None, lambda a, b, out, aux: MM.matmul_ref(a, b, out))
    assert 0 not in admitted and admitted  # the others, or some of them, still in


@pytest.mark.skipif(not CUDA, reason="cuBLASLt needs CUDA")
@pytest.mark.parametrize("dtype", LOW, ids=dtype_id)
def test_aligned_low_precision_goes_to_cublaslt_the_rest_to_pytorch(dtype):
    a, b, out = operands(64, 48, 1000, dtype, "cuda", False, True, torch.float32, 0.0)
    assert MM._lt_takes(a, b, out)
    assert MM._lt_takes(a.T, out.to(dtype), torch.empty(48, 1000, device="cuda", dtype=dtype))
    # rows of 257 (V = 257 in the loss's tests, 50257 in nanoGPT's unpadded vocabulary) are not 16-byte aligned
    odd = torch.randn(64, 257, device="cuda").to(dtype)
    assert not MM._lt_takes(a, odd[:48], torch.empty(64, 257, device="cuda", dtype=dtype))
    assert not MM._lt_takes(a[:, 1:], b[1:], out)  # a pointer 2 bytes past an aligned one
    torch.use_deterministic_algorithms(True)
    try:  # the measured choice may differ between runs; PyTorch's does not
        assert not MM._lt_takes(a, b, out)
    finally:
        torch.use_deterministic_algorithms(False)
    f32 = torch.randn(64, 48, device="cuda")
    assert not MM._lt_takes(f32, f32.T, torch.empty(64, 64, device="cuda"))
    assert not isinstance(MM.matmul_plan(f32, f32.T, torch.empty(64, 64, device="cuda")), MM._LtPlan)


def test_cpu_plan_is_pytorchs_call():
    a, b, out = operands(40, 24, 72, torch.bfloat16, "cpu", False, False, torch.float32, 1.0)
    plan = MM.matmul_plan(a, b, out.clone(), 1.0)
    assert not isinstance(plan, MM._LtPlan)
    assert torch.equal(plan(a, b, out.clone()), MM.matmul_ref(a, b, out.clone(), 1.0))


@pytest.mark.skipif(not CUDA, reason="cuBLASLt needs CUDA")
def test_a_problem_is_measured_once_and_its_plan_checks_its_operands(monkeypatch):
    monkeypatch.setattr(MM, "_chosen", {})
    measured = []
    fastest = MM._LtPlan.fastest
    monkeypatch.setattr(MM._LtPlan, "fastest", lambda self, *t: measured.append(1) or fastest(self, *t))
    a, b, out = operands(200, 96, 328, torch.bfloat16, "cuda", False, False, torch.bfloat16, 0.0)
    plan = MM.matmul_plan(a, b, out)  # cuBLASLt's fastest algorithm or PyTorch's call, whichever measured faster
    assert MM.matmul_plan(a.clone(), b.clone(), torch.empty_like(out)) is plan and len(measured) == 1
    assert MM.matmul_plan(a, b, out, beta=1.0) is not plan and len(measured) == 2  # beta != 0 is another problem
    a2, b2 = torch.randn_like(a), torch.randn_like(b)  # other tensors, as each chunk after the first
    assert_close_3way("out", plan(a2, b2, torch.empty_like(out)), MM.matmul_ref(a2, b2, torch.empty_like(out)),
                      a2.double() @ b2.double())
    lt = MM._LtPlan(MM._cublaslt(), a, b, out, 0.0)
    with pytest.raises(ValueError):
        lt(a[:100], b, out[:100])
    with pytest.raises(ValueError):  # a pointer 16 bytes aligned at the plan, 2 at the call
        lt(torch.empty(a.numel() + 1, device="cuda", dtype=a.dtype)[1:].view_as(a), b, out)


@pytest.mark.skipif(not CUDA, reason="cuBLASLt needs CUDA")
def test_plan_first_made_in_a_graph_capture_runs_on_replay():
    a, b, out = operands(136, 72, 264, torch.bfloat16, "cuda", True, False, torch.float32, 1.0)
    MM.matmul_plan(a, b, out)  # cuBLASLt's handle made outside the capture, as any warm-up makes it
    start = out.clone()
    graph, side = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.cuda.graph(graph, stream=side):
        plan = MM.matmul_plan(a, b, out, beta=1.0)  # first met here: cuBLASLt's first algorithm, nothing kept
        plan(a, b, out)
    assert isinstance(plan, MM._LtPlan) and plan.chosen == 0
    torch.cuda.current_stream().wait_stream(side)
    out.copy_(start)
    graph.replay()
    torch.cuda.synchronize()
    want = a.double() @ b.double() + start.double()
    assert_close_3way("out", out, MM.matmul_ref(a, b, start.clone(), 1.0), want)
    assert MM._key(a, b, out, 1.0, None, None) not in MM._chosen


def epilogue_want(epilogue, a, b, aux):
    """The float64 out of an epilogue's plan (GELU's tanh form), and its aux for 'gelu'."""
    prod = a.double() @ b.double()
    if epilogue == "gelu":
        return torch.nn.functional.gelu(prod, approximate="tanh"), prod
    return torch.ops.aten.gelu_backward(prod, aux.double(), approximate="tanh"), None


# (M, K, N) as the MLP has them (kernels/gelu_mlp.py): 'gelu' x W1^T, 'dgelu' dy W2; GPT-2's at a sixth of its rows
EPILOGUE_SHAPES = [(1, 64, 40), (40, 24, 72), (300, 136, 520)] + ([(2048, 768, 3072)] if CUDA else [])


@pytest.mark.parametrize("epilogue", ["gelu", "dgelu"])
@pytest.mark.parametrize("shape", EPILOGUE_SHAPES, ids=case_id)
@pytest.mark.parametrize("dtype", LOW, ids=dtype_id)
def test_epilogue_plans_against_float64(epilogue, shape, dtype, device):
    """The plan's choice, and on the GPU each algorithm cuBLASLt offers and the plan admits, writes out (and aux,
    for 'gelu') within the three-way rule; 'gelu' never reads out or aux, 'dgelu' never reads out."""
    M, K, N = shape
    a, b, out = operands(M, K, N, dtype, device, False, epilogue == "gelu", dtype, 0.0)
    aux = (torch.randn(M, N, device=device) * 2).to(dtype)  # dgelu's input: GELU's bend and both tails
    want, want_aux = epilogue_want(epilogue, a, b, aux)
    torch_aux = aux.clone()
    torch_out = MM.matmul_ref(a, b, torch.empty_like(out), 0.0, epilogue, torch_aux)
    ref = lambda a, b, out, aux: MM.matmul_ref(a, b, out, 0.0, epilogue, aux)
    runs = {"chosen": MM.matmul_plan(a, b, out.clone(), epilogue=epilogue, aux=aux.clone())}
    if device == "cuda":
        plan = MM._LtPlan(MM._cublaslt(), a, b, out, 0.0, epilogue, aux)
        admitted = plan.admissible(a, b, out.clone(), aux.clone(), ref)
        assert admitted
        runs.update({f"algorithm {i}": lambda a, b, out, aux, i=i: plan.run(plan.algos[i], a, b, out, aux)
                     for i in admitted})
    for name, run in runs.items():
        given_aux = torch.full_like(aux, float("nan")) if epilogue == "gelu" else aux.clone()
        got = run(a, b, torch.full_like(out, float("nan")), given_aux)
        assert_close_3way(f"out, {name}", got, torch_out, want)
        if epilogue == "gelu":
            assert_close_3way(f"aux, {name}", given_aux, torch_aux, want_aux)
        else:
            assert torch.equal(given_aux, aux)


def test_epilogue_arguments_are_checked():
    a, b, out = operands(8, 16, 24, torch.bfloat16, "cpu", False, False, torch.bfloat16, 0.0)
    with pytest.raises(ValueError, match="wants aux"):
        MM.matmul_plan(a, b, out, epilogue="gelu")
    with pytest.raises(ValueError, match="wants aux"):
        MM.matmul_plan(a, b, out, epilogue="relu", aux=out.clone())
    with pytest.raises(ValueError, match="beta 0"):
        MM.matmul_plan(a, b, out, beta=1.0, epilogue="dgelu", aux=out.clone())


@pytest.mark.skipif(not CUDA, reason="cuBLASLt needs CUDA")
def test_an_algorithm_writing_a_wrong_aux_is_not_admitted(monkeypatch):
    """'gelu' writes aux, which the backward's 'dgelu' reads: an algorithm is held to the rule on it too."""
    a, b, out = operands(300, 136, 520, torch.bfloat16, "cuda", False, True, torch.bfloat16, 0.0)
    aux = torch.empty_like(out)
    plan = MM._LtPlan(MM._cublaslt(), a, b, out, 0.0, "gelu", aux)
    run = MM._LtPlan.run

    def off(self, algo, a, b, out, aux):
        run(self, algo, a, b, out, aux)
        if algo is plan.algos[0]:
            aux.mul_(1.05)  # aux 5% off (~6 bf16 units at the sample's largest value; the rule allows 1 + 2x PyTorch's)
        return out
    monkeypatch.setattr(MM._LtPlan, "run", off)
    admitted = plan.admissible(a, b, out, aux, lambda a, b, out, aux: MM.matmul_ref(a, b, out, 0.0, "gelu", aux))
    assert 0 not in admitted and admitted


@pytest.mark.parametrize("epilogue", [None, "gelu", "dgelu"])
def test_matmul_runs_the_plans_choice_once(epilogue, device):
    """matmul(...) is matmul_plan(...)(...) on the same tensors, bit for bit (the same algorithm), out returned."""
    a, b, out = operands(300, 136, 520, torch.bfloat16, device, False, True, torch.bfloat16, 0.0)
    aux = None if epilogue is None else (torch.randn(300, 520, device=device) * 2).to(torch.bfloat16)
    plan = MM.matmul_plan(a, b, out, epilogue=epilogue, aux=None if aux is None else aux.clone())
    want_aux = None if aux is None else aux.clone()
    want = plan(a, b, torch.empty_like(out), want_aux)
    got_aux = None if aux is None else aux.clone()
    got = MM.matmul(a, b, torch.empty_like(out), epilogue=epilogue, aux=got_aux)
    assert torch.equal(got, want) and (aux is None or torch.equal(got_aux, want_aux))
