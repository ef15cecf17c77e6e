"""
Matrix products through cuBLASLt, with the algorithm measured instead of taken on the heuristic's word.

    out = a @ b + beta * out       a (M, K) and b (K, N) in bf16 or fp16; out (M, N) in their dtype or fp32;
                                   products summed in fp32; beta 0 (out written only) or not (out read too)
    epilogue 'gelu':  aux = a @ b, out = gelu(aux)            GELU's tanh form (cuBLASLt's only one), applied in
    epilogue 'dgelu': out = (a @ b) * gelu'(aux)              fp32 before rounding; beta 0, out and aux (M, N)
                                                              row-major in the inputs' dtype (kernels/gelu_mlp.py)

torch.mm runs the one algorithm cuBLAS's heuristic picks for a problem. cuBLASLt's heuristic offers several, and
the pick is not always the fastest: for the chunk products of GPT-2's fused LM head and loss (2048 rows, H = 768,
V = 50304), other algorithms measure faster for the logits product, dx's and the fp32 sum of dW's
(docs/perf-notes.md). matmul_plan times every offered algorithm on the caller's own tensors, once per problem
(shapes, strides, dtypes, beta zero or not, GPU), beside PyTorch's own call (cuBLAS's pick need not be among those
offered), and returns a callable that launches the fastest; later plans for the same problem reuse the choice. An
algorithm is timed only if it keeps the tests' three-way rule against PyTorch's call on a sample of the output (not
every one does, as for some K = 50304 products into fp32).

Constraints: a and b each row-major or the transpose of a row-major matrix, out row-major, every pointer and
leading dimension 16-byte aligned. Measuring runs the products into out: make a plan before out holds anything
worth keeping (the fused loss makes its chunk plans before its first chunk). Measuring waits on the GPU, which a
CUDA graph's capture forbids: a problem first met while capturing takes the heuristic's first algorithm, unmeasured
and unchecked (one printed line). Where cuBLASLt cannot take the problem (CPU tensors, fp32 inputs, unaligned rows,
deterministic mode, no library found) the plan is matmul_ref, PyTorch's own call.
"""
import ctypes
import re
import statistics

import torch

from kernels.backend import say_once


def matmul_ref(a, b, out, beta=0.0, epilogue=None, aux=None):
    """out = a @ b + beta * out by PyTorch's calls, the products summed in fp32 where out is fp32; returns out.
    With an epilogue (beta 0): 'gelu' writes aux = a @ b and out = gelu(aux); 'dgelu' writes out = (a @ b) * gelu'(aux)
    (GELU's tanh form, the one cuBLASLt's epilogues compute)."""
    if epilogue == "gelu":
        return torch.ops.aten.gelu.out(torch.mm(a, b, out=aux), approximate="tanh", out=out)
    if epilogue == "dgelu":
        return torch.ops.aten.gelu_backward.grad_input(torch.mm(a, b, out=out), aux, approximate="tanh", grad_input=out)
    if out.dtype == a.dtype:
        return torch.mm(a, b, out=out) if beta == 0 else out.addmm_(a, b, beta=beta)
    if a.is_cuda:  # low-precision products summed into fp32 by cuBLAS, no fp32 copies of a and b
        return torch.addmm(out, a, b, beta=beta, out_dtype=out.dtype, out=out)
    return out.addmm_(a.float(), b.float(), beta=beta)


# cuBLASLt's enums (cublasLt.h, cuBLAS 12 and 13)
_DTYPES = {torch.bfloat16: 14, torch.float16: 2, torch.float32: 0}  # cudaDataType
_COMPUTE_32F = 68                                                 # cublasComputeType_t
_DESC_TRANSA, _DESC_TRANSB = 3, 4                                 # cublasLtMatmulDescAttributes_t
_DESC_EPILOGUE, _DESC_AUX_POINTER, _DESC_AUX_LD = 7, 11, 12
_EPILOGUES = {None: 1, "gelu": 160, "dgelu": 192}                # cublasLtEpilogue_t: DEFAULT, GELU_AUX, DGELU
_PREF_MAX_WORKSPACE, _PREF_REDUCTION, _PREF_ALIGNMENT_A = 1, 3, 5  # cublasLtMatmulPreferenceAttributes_t (A..D: 5..8)
_REDUCTION_FP32 = 2  # cublasLtReductionScheme_t COMPUTE_TYPE: split-K's partial sums in fp32, never in out's dtype
ALIGNMENT = 16            # bytes: what Hopper's tensor-memory copies need, and what plans ask cuBLASLt to allow
MAX_WORKSPACE = 32 << 20  # bytes an algorithm may ask for (split-K's partial sums): PyTorch's own cuBLAS workspace
ROUNDS, CALLS = 5, 3      # measuring: rounds in turn over the algorithms, CALLS back-to-back calls timed in each
SAMPLE = 64               # rows and columns of out on which each algorithm's accuracy is checked before it is timed
OFFERED = 16              # algorithms asked of cuBLASLt's heuristic per problem


class _Heuristic(ctypes.Structure):  # cublasLtMatmulHeuristicResult_t
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


_lib, _handles, _chosen = [], {}, {}  # the library (once), a handle per GPU, the plan per problem

_P, _VP, _SZ = ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_size_t
_SIGNATURES = {  # cublasLt.h; every function returns a cublasStatus_t (int)
    "cublasLtCreate": [_P],
    "cublasLtMatmulDescCreate": [_P, ctypes.c_int, ctypes.c_int],
    "cublasLtMatmulDescSetAttribute": [_VP, ctypes.c_int, _VP, _SZ],
    "cublasLtMatrixLayoutCreate": [_P, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64],
    "cublasLtMatmulPreferenceCreate": [_P],
    "cublasLtMatmulPreferenceSetAttribute": [_VP, ctypes.c_int, _VP, _SZ],
    "cublasLtMatmulPreferenceDestroy": [_VP],
    "cublasLtMatmulAlgoGetHeuristic": [_VP] * 7 + [ctypes.c_int, _VP, ctypes.POINTER(ctypes.c_int)],
    "cublasLtMatmul": [_VP] * 14 + [_SZ, _VP],
}


def _cublaslt():
    """The cuBLASLt library PyTorch loaded (found in the process's memory map), its functions typed; or None."""
    if not _lib:
        torch.cuda.current_blas_handle()  # loads cuBLAS, and cuBLASLt with it
        try:
            with open("/proc/self/maps") as maps:
                path = next((line.split()[5] for line in maps if re.search(r"/libcublasLt\.so[.0-9]*$", line)), None)
            lib = ctypes.CDLL(path) if path else None
        except OSError:
            lib = None
        for name, argtypes in _SIGNATURES.items() if lib else ():
            getattr(lib, name).argtypes, getattr(lib, name).restype = argtypes, ctypes.c_int
        _lib.append(lib)
    return _lib[0]


def _check(status, call):
    if status != 0:
        raise RuntimeError(f"cuBLASLt {call}: status {status}")


def _operand(t, rows, cols):
    """(transpose, (rows, cols, ld) of the column-major matrix in memory) for cuBLAS's operand op(X) = t^T,
    (rows x cols), with t row-major or the transpose of a row-major matrix; None otherwise."""
    if t.stride(1) == 1 and t.stride(0) >= max(1, t.shape[1]):  # t row-major: t^T column-major as it is
        return 0, (rows, cols, t.stride(0))
    if t.stride(0) == 1 and t.stride(1) >= max(1, t.shape[0]):  # t^T row-major: t column-major, transposed
        return 1, (cols, rows, t.stride(1))
    return None


def _strided_ok(t):
    """t row-major, or the transpose of a row-major matrix, with room for its rows (what _operand poses)."""
    return _operand(t, *t.shape) is not None


class _LtPlan:
    """One problem's cuBLASLt descriptors and its offered algorithms; __call__ launches the chosen one."""

    def __init__(self, lib, a, b, out, beta, epilogue=None, aux=None):
        (M, K), N = a.shape, b.shape[1]
        # row-major out (M, N) is column-major out^T (N x M) = b^T a^T: cuBLAS's A is b^T, its B is a^T
        (trans_a, lay_a), (trans_b, lay_b) = _operand(b, N, K), _operand(a, K, M)
        self.lib, self.device = lib, out.device
        # run()'s constant arguments, made here once: in an eager step a product's host time is paid at every call
        self.alpha, self.beta = ctypes.c_float(1.0), ctypes.c_float(beta)
        self.scalars = ctypes.byref(self.alpha), ctypes.byref(self.beta)
        self.aux_pointer = ctypes.c_void_p()
        self.handle = _handles.get(out.device.index)
        if self.handle is None:
            self.handle = _handles[out.device.index] = ctypes.c_void_p()
            with torch.cuda.device(out.device):
                _check(lib.cublasLtCreate(ctypes.byref(self.handle)), "create")
        self.desc = ctypes.c_void_p()
        _check(lib.cublasLtMatmulDescCreate(ctypes.byref(self.desc), _COMPUTE_32F, _DTYPES[torch.float32]), "desc")
        self.epilogue = epilogue
        for attr, value in ((_DESC_TRANSA, ctypes.c_int32(trans_a)), (_DESC_TRANSB, ctypes.c_int32(trans_b)),
                            (_DESC_EPILOGUE, ctypes.c_uint32(_EPILOGUES[epilogue]))):
            self._set(attr, value)
        if epilogue:  # aux: row-major (M, N) as out is, so column-major N x M to cuBLAS, with out's dtype
            self._set(_DESC_AUX_LD, ctypes.c_int64(aux.stride(0)))
            self._set(_DESC_AUX_POINTER, ctypes.c_void_p(aux.data_ptr()))  # the heuristic reads its alignment
        self.layouts = [ctypes.c_void_p() for _ in range(3)]
        for lay, dtype, (rows, cols, ld) in zip(self.layouts, (b.dtype, a.dtype, out.dtype),
                                                (lay_a, lay_b, (N, M, out.stride(0)))):
            _check(lib.cublasLtMatrixLayoutCreate(ctypes.byref(lay), _DTYPES[dtype], ctypes.c_uint64(rows),
                                                  ctypes.c_uint64(cols), ctypes.c_int64(ld)), "layout")
        pref = ctypes.c_void_p()
        _check(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "preference")
        _check(lib.cublasLtMatmulPreferenceSetAttribute(pref, _PREF_MAX_WORKSPACE, ctypes.byref(
            ctypes.c_uint64(MAX_WORKSPACE)), ctypes.c_size_t(8)), "preference")
        _check(lib.cublasLtMatmulPreferenceSetAttribute(pref, _PREF_REDUCTION, ctypes.byref(
            ctypes.c_uint32(_REDUCTION_FP32)), ctypes.c_size_t(4)), "preference")
        for i in range(4):  # A, B, C, D: the pointers are only known to be ALIGNMENT-aligned
            _check(lib.cublasLtMatmulPreferenceSetAttribute(pref, _PREF_ALIGNMENT_A + i, ctypes.byref(
                ctypes.c_uint32(ALIGNMENT)), ctypes.c_size_t(4)), "preference")
        offered, count = (_Heuristic * OFFERED)(), ctypes.c_int()
        a_lay, b_lay, d_lay = self.layouts
        status = lib.cublasLtMatmulAlgoGetHeuristic(self.handle, self.desc, a_lay, b_lay, d_lay, d_lay, pref, OFFERED,
                                                    offered, ctypes.byref(count))
        lib.cublasLtMatmulPreferenceDestroy(pref)
        # none offered (or a status saying so, as NOT_SUPPORTED where no heuristic exists): PyTorch's call stands in
        self.algos = [offered[i] for i in range(count.value) if offered[i].state == 0] if status == 0 else []
        self.chosen = 0
        self.layout = _layout(a, b, out, aux)

    def _set(self, attr, value):
        _check(self.lib.cublasLtMatmulDescSetAttribute(self.desc, attr, ctypes.byref(value),
                                                       ctypes.c_size_t(ctypes.sizeof(value))), "desc")

    def run(self, algo, a, b, out, aux=None):
        """Launch algo on these tensors, with as little Python as a launch can take: the pointers go as ints (the
        functions' argtypes convert them) and the stream as its raw handle, so that a call's host time matches
        torch.mm(out=)'s (docs/perf-notes.md)."""
        if self.epilogue:  # the descriptor holds aux's address: set at each call (one plan serves many layers)
            self.aux_pointer.value = aux.data_ptr()
            self._set(_DESC_AUX_POINTER, self.aux_pointer)
        workspace = torch.empty(algo.workspace, dtype=torch.uint8, device=self.device) if algo.workspace else None
        (a_lay, b_lay, d_lay), (alpha, beta) = self.layouts, self.scalars
        _check(self.lib.cublasLtMatmul(
            self.handle, self.desc, alpha, b.data_ptr(), a_lay, a.data_ptr(), b_lay, beta, out.data_ptr(), d_lay,
            out.data_ptr(), d_lay, ctypes.byref(algo.algo), None if workspace is None else workspace.data_ptr(),
            algo.workspace, torch._C._cuda_getCurrentRawStream(self.device.index)), "matmul")
        return out

    def admissible(self, a, b, out, aux, ref):
        """The offered algorithms that run here and keep the three-way rule on a sample of out (SAMPLE rows and
        columns), and of aux where the epilogue writes it ('gelu'): error against float64 at most twice PyTorch's
        call's plus one unit of the dtype at the sample's largest value."""
        rows, cols = (torch.linspace(0, n - 1, min(SAMPLE, n), device=a.device).long() for n in out.shape)
        product = a[rows].double() @ b[:, cols].double()
        written = [(out, product)]  # each tensor the product writes, and its sample in float64
        if self.epilogue == "gelu":
            written = [(out, torch.nn.functional.gelu(product, approximate="tanh")), (aux, product)]
        elif self.epilogue == "dgelu":
            written = [(out, torch.ops.aten.gelu_backward(product, aux[rows][:, cols].double(), approximate="tanh"))]

        def errors(run):
            for t, _ in written:
                t[rows] = 0  # beta's term adds nothing to the sample's rows; a sample left unwritten shows
            run()
            return [(t[rows][:, cols].double() - want).abs().max().item() for t, want in written]
        limits = [2 * e + torch.finfo(t.dtype).eps * want.abs().max().item()
                  for e, (t, want) in zip(errors(lambda: ref(a, b, out, aux)), written)]
        kept = []
        for i, algo in enumerate(self.algos):
            try:
                if all(e <= limit for e, limit in zip(errors(lambda: self.run(algo, a, b, out, aux)), limits)):
                    kept.append(i)
            except RuntimeError:  # an algorithm that fails to launch here is out
                pass
        return kept

    def fastest(self, a, b, out, aux, ref):
        """The index of the admissible algorithm that runs these tensors fastest, or None where PyTorch's call (ref)
        is faster than each (cuBLAS's own pick need not be among those offered); medians over rounds in turn."""
        runs = {i: lambda algo=self.algos[i]: self.run(algo, a, b, out, aux)
                for i in self.admissible(a, b, out, aux, ref)}
        runs[None] = lambda: ref(a, b, out, aux)
        timed = []
        for _ in range(ROUNDS):
            for i, run in runs.items():
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(CALLS):
                    run()
                end.record()
                timed.append((i, start, end))
        torch.cuda.synchronize(self.device)
        ms = {i: statistics.median(s.elapsed_time(e) for j, s, e in timed if j == i) for i in runs}
        return min(ms, key=ms.get)

    def __call__(self, a, b, out, aux=None):
        if _layout(a, b, out, aux) != self.layout or not all(_aligned(t) for t in (a, b, out, aux) if t is not None):
            raise ValueError(f"matmul plan for {self.layout} "
                             f"called on {_layout(a, b, out, aux)} (or unaligned pointers)")
        return self.run(self.algos[self.chosen], a, b, out, aux)


def _layout(a, b, out, aux=None):
    return (a.shape, a.stride(), b.shape, b.stride(), out.shape, out.stride(), a.dtype, b.dtype, out.dtype,
            None if aux is None else (aux.shape, aux.stride(), aux.dtype))


def _key(a, b, out, beta, epilogue, aux):
    """A problem, as plans are chosen and kept for it: the layout, beta and the epilogue, and what else decides whether
    cuBLASLt may take it (_lt_takes) but the pointers' alignment: the tensors' devices, the current GPU, deterministic
    mode."""
    return (_layout(a, b, out, aux), beta, epilogue, a.device, b.device, out.device, aux is None or aux.device,
            a.is_cuda and torch.cuda.current_device(), torch.are_deterministic_algorithms_enabled())


def _aligned(t):
    return t.data_ptr() % ALIGNMENT == 0 and all(s * t.element_size() % ALIGNMENT == 0 for s in t.stride() if s != 1)


def _lt_takes(a, b, out, beta=0.0, epilogue=None, aux=None):
    """Whether cuBLASLt can take the problem as _LtPlan poses it: on the current GPU (where its launches and
    events go), bf16 or fp16 in, row-major out, and not in deterministic mode (the measured choice may differ
    between runs, PyTorch's does not). An epilogue wants out in the inputs' dtype, beta 0, and aux as out is."""
    return (a.is_cuda and a.device == b.device == out.device and a.device.index == torch.cuda.current_device()
            and a.dtype == b.dtype and a.dtype in (torch.bfloat16, torch.float16)
            and out.dtype in (a.dtype, torch.float32)
            and out.numel() > 0 and a.shape[1] > 0 and out.stride(1) == 1 and _strided_ok(out.T)
            and _strided_ok(a) and _strided_ok(b) and all(map(_aligned, (a, b, out)))
            and (epilogue is None or (beta == 0 and out.dtype == a.dtype and aux.dtype == out.dtype
                                      and aux.device == out.device and aux.stride(1) == 1
                                      and aux.stride(0) >= aux.shape[1] and _aligned(aux)))
            and not torch.are_deterministic_algorithms_enabled() and _cublaslt() is not None)


def matmul_plan(a, b, out, beta=0.0, epilogue=None, aux=None):
    """A callable plan(a, b, out, aux=None) computing out = a @ b + beta * out, or with an epilogue (beta 0) aux =
    a @ b and out = gelu(aux) ('gelu'), or out = (a @ b) * gelu'(aux) ('dgelu'), GELU's tanh form, for tensors of
    these shapes, strides and dtypes: the fastest of cuBLASLt's offered algorithms and PyTorch's call, measured on
    these tensors (which overwrites out, and aux for 'gelu'), or matmul_ref where cuBLASLt cannot take the problem."""
    key = _key(a, b, out, beta, epilogue, aux)
    plan = _chosen.get(key)
    # a problem met before passed every check below but alignment, which is the pointers': checked here each call
    # (the full checks at each call cost an eager step host time per product: docs/perf-notes.md)
    if plan is not None and all(_aligned(t) for t in (a, b, out, aux) if t is not None):
        return plan
    if a.dim() != 2 or b.dim() != 2 or out.shape != (a.shape[0], b.shape[1]) or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul_plan: shapes {tuple(a.shape)} @ {tuple(b.shape)} -> {tuple(out.shape)}")
    if (epilogue not in _EPILOGUES or (epilogue is None) != (aux is None)
            or (aux is not None and aux.shape != out.shape)):
        raise ValueError(f"matmul_plan: epilogue {epilogue!r} wants aux of out's shape (and no epilogue, no aux)")
    if epilogue and beta != 0:
        raise ValueError("matmul_plan: an epilogue's product adds nothing to out (beta 0)")
    ref = lambda a, b, out, aux=None: matmul_ref(a, b, out, beta, epilogue, aux)
    if not _lt_takes(a, b, out, beta, epilogue, aux):
        return ref
    if plan is None:
        plan = _LtPlan(_cublaslt(), a, b, out, beta, epilogue, aux)
        if torch.cuda.is_current_stream_capturing():  # no measuring inside a capture; not kept for later plans
            say_once("matmul_plan: a problem first met in a CUDA graph's capture takes cuBLASLt's first algorithm")
            return plan if plan.algos else ref  # (a launch that fails raises, as a failing PyTorch call would)
        plan.chosen = plan.fastest(a, b, out, aux, ref)
        if plan.chosen is None:
            plan = ref
        _chosen[key] = plan
    return plan


def matmul(a, b, out, beta=0.0, epilogue=None, aux=None):
    """The product matmul_plan(a, b, out, beta, epilogue, aux) plans, run once on these tensors; returns out. The plan's
    call would check the layout and alignment that matmul_plan has just checked: a caller making each product once
    (kernels/gelu_mlp.py) takes this instead, and an eager step pays those checks once per product."""
    plan = matmul_plan(a, b, out, beta, epilogue, aux)
    if isinstance(plan, _LtPlan):
        return plan.run(plan.algos[plan.chosen], a, b, out, aux)
    return plan(a, b, out, aux)
