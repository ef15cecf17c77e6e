"""Why kernels/choose.py's CUDA graph of the MLP case failed (call 2): the MLP, PyTorch's and ours, forward and
backward captured as choose.graph_ms captures a graphed step's op (under bf16 autocast, cuBLAS without its
workspace), with the weights fp32 (autocast casts them) or bf16. One case per process: a failed capture leaves
the process's CUDA state broken."""
import subprocess, sys, traceback
if len(sys.argv) == 1:
    for wdtype in ("float32", "bfloat16"):
        for be in ("torch", "triton"):
            r = subprocess.run([sys.executable, __file__, wdtype, be], capture_output=True, text=True)
            print(f"weights {wdtype}, {be}: " + (r.stdout.strip() or "") + (r.stderr.strip()[-600:] if r.returncode else ""))
    sys.exit()
sys.path.insert(0, ".")
import torch
import kernels
from kernels.choose import _run, graph_ms
wdtype, be = getattr(torch, sys.argv[1]), sys.argv[2]
x = torch.randn(12, 1024, 768, device="cuda", dtype=torch.bfloat16, requires_grad=True)
w1 = (torch.randn(3072, 768, device="cuda") * 768 ** -0.5).to(wdtype).requires_grad_()
w2 = (torch.randn(768, 3072, device="cuda") * 3072 ** -0.5).to(wdtype).requires_grad_()
f = lambda x, w1, w2: kernels.gelu_mlp(x, w1, w2, backend=be)
with torch.autocast("cuda", dtype=torch.bfloat16):
    _run(f, [x, w1, w2])
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    try:
        from step_graph import cublas_without_workspace
        with torch.cuda.stream(side), cublas_without_workspace():
            for _ in range(3):
                _run(f, [x, w1, w2])
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=side):
                _run(f, [x, w1, w2])
        torch.cuda.current_stream().wait_stream(side)
        g.replay(); torch.cuda.synchronize()
        print("captured and replayed")
    except Exception:
        print("FAILED: " + traceback.format_exc()[-900:])
