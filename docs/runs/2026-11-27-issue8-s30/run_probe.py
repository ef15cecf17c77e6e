"""Host time of one cuBLASLt launch through _LtPlan.run, as it is and leaner (the constant ctypes arguments made once
per plan, pointers passed as ints, the stream's raw handle), against torch.mm(out=); a 64x64 bf16 product whose GPU
time is below any of them (median us per call over rounds of N calls)."""
import ctypes, statistics, sys, time
sys.path.insert(0, '.')
import torch
from kernels import matmul as M

dev, bf = 'cuda', torch.bfloat16
N, ROUNDS = 3000, 7


def per_call(fn):
    fn(); torch.cuda.synchronize()
    times = []
    for _ in range(ROUNDS):
        t = time.perf_counter()
        for _ in range(N):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) / N * 1e6)
    return statistics.median(times)


a, b, out = (torch.randn(64, 64, device=dev, dtype=bf) for _ in range(3))
aux = torch.empty_like(out)
plain = M._LtPlan(M._cublaslt(), a, b, out, 0.0)
gelu = M._LtPlan(M._cublaslt(), a, b, out, 0.0, 'gelu', aux)
print("algos", len(plain.algos), len(gelu.algos), "workspace", plain.algos[0].workspace, gelu.algos[0].workspace)


def lean(plan, algo):
    """What run() would do with its constants made once."""
    lib = plan.lib
    a_lay, b_lay, d_lay = plan.layouts
    alpha, beta, algo_ref = ctypes.byref(plan.alpha), ctypes.byref(plan.beta), ctypes.byref(algo)
    aux_ptr = ctypes.c_void_p()
    aux_ref, aux_size = ctypes.byref(aux_ptr), ctypes.sizeof(aux_ptr)
    index = plan.device.index

    def run(a, b, out, aux=None):
        if aux is not None:
            aux_ptr.value = aux.data_ptr()
            lib.cublasLtMatmulDescSetAttribute(plan.desc, M._DESC_AUX_POINTER, aux_ref, aux_size)
        workspace = torch.empty(algo.workspace, dtype=torch.uint8, device=plan.device) if algo.workspace else None
        status = lib.cublasLtMatmul(plan.handle, plan.desc, alpha, b.data_ptr(), a_lay, a.data_ptr(), b_lay, beta,
                                    out.data_ptr(), d_lay, out.data_ptr(), d_lay, algo_ref,
                                    workspace.data_ptr() if workspace is not None else None, algo.workspace,
                                    torch._C._cuda_getCurrentRawStream(index))
        if status:
            raise RuntimeError(status)
        return out
    return run


lean_plain, lean_gelu = lean(plain, plain.algos[0]), lean(gelu, gelu.algos[0])
rows = {
    'torch.mm(out=)': lambda: torch.mm(a, b, out=out),
    'run(), as it is': lambda: plain.run(plain.algos[0], a, b, out),
    'run(), lean': lambda: lean_plain(a, b, out),
    'run(gelu), as it is': lambda: gelu.run(gelu.algos[0], a, b, out, aux),
    'run(gelu), lean': lambda: lean_gelu(a, b, out, aux),
    'current_stream(dev)': lambda: torch.cuda.current_stream(out.device).cuda_stream,
    'raw stream': lambda: torch._C._cuda_getCurrentRawStream(0),
    'data_ptr x3': lambda: (a.data_ptr(), b.data_ptr(), out.data_ptr()),
}
for r in range(2):
    for name, fn in rows.items():
        print(f"{name:22s} {per_call(fn):6.2f} us")
torch.testing.assert_close(lean_plain(a, b, out.clone()), plain.run(plain.algos[0], a, b, out.clone()), rtol=0, atol=0)
print("lean == as it is")
