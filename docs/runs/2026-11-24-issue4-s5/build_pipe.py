"""Offline sm_90a builds (CPU machine, no GPU) of our forward and pipe_fwd.py's: ptxas registers,
spills, C7515, and the pending count of every wgmma.wait_group in the PTX. Run from the repo root."""
import os, sys, re, subprocess, tempfile
os.environ.pop("TRITON_INTERPRET", None)
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton
from triton.backends.compiler import GPUTarget
import kernels.attention as A, pipe_fwd as P
def build(fn, D, BM, BN, w, st):
    cx = dict(HEAD_DIM=D, CAUSAL=True, BLOCK_M=BM, BLOCK_N=BN)
    sig, attrs = {}, {}
    for i, a in enumerate(fn.arg_names):
        sig[a] = "constexpr" if a in cx else ("*fp32" if a == "LSE" else "*bf16" if a in "QKVO" else "fp32" if a == "scale" else "i32")
        if sig[a].startswith("*") or a.startswith("stride"): attrs[(i,)] = [["tt.divisibility", 16]]
    src = triton.compiler.ASTSource(fn=fn, signature=sig, attrs=attrs, constexprs={(fn.arg_names.index(k),): v for k, v in cx.items()})
    c = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))
    ptx = c.asm["ptx"]
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    with tempfile.TemporaryDirectory() as tmp:
        open(f"{tmp}/k.ptx", "w").write(ptx)
        r = subprocess.run([ptxas, "-arch=sm_90a", "-v", f"{tmp}/k.ptx", "-o", f"{tmp}/k.cubin"], capture_output=True, text=True)
    waits = re.findall(r"wgmma.wait_group.sync.aligned (\d+)", ptx)
    return [l.strip() for l in r.stderr.splitlines() if "registers" in l or "C75" in l or "spill" in l], waits
for D, BM, BN, w, st in [(64, 64, 64, 4, 3), (128, 128, 128, 8, 3), (128, 128, 64, 8, 3), (128, 128, 64, 8, 4)]:
    for fn in (A._flash_attention_fwd_kernel, P.fwd_overlapped_kernel):
        rep, waits = build(fn, D, BM, BN, w, st)
        print(D, BM, BN, w, st, fn.__name__, rep, "waits", waits)
