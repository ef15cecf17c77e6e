"""
Build one of the attention kernels for the H100 (sm_90a) on any machine, GPU or not, with
Triton's compiler and its ptxas, and print ptxas's report: registers, spills and
performance warnings (C7515 and its kin: "wgmma.mma_async instructions are serialized").
tests/test_attention.py builds its cases with ptxas_report() in one process; one by hand:

    python tests/sm90_ptxas.py _flash_attention_bwd_dkdv_kernel 32 128 4 3 --head-dim 64 --group 1

Pointers and strides are marked 16-byte divisible, as the launcher's arguments are at run
time (without that, loads compile to narrow ones and the report is not the real one).
"""
import argparse
import os
import subprocess
import sys
import tempfile

os.environ.pop("TRITON_INTERPRET", None)  # the real compiler, not the interpreter
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.backends.nvidia.compiler import get_ptxas  # noqa: E402

import kernels.attention as attention  # noqa: E402


def ptxas_report(name, block_m, block_n, num_warps, num_stages, head_dim=64, causal=True, group=1):
    fn = getattr(attention, name)
    constexprs = dict(HEAD_DIM=head_dim, CAUSAL=causal, BLOCK_M=block_m, BLOCK_N=block_n, GROUP=group)
    is_constexpr = {param.name for param in fn.params if param.is_constexpr}
    signature, attrs = {}, {}
    for i, arg in enumerate(fn.arg_names):
        if arg in is_constexpr:
            signature[arg] = "constexpr"
        elif arg in ("LSE", "DELTA"):
            signature[arg] = "*fp32"
        elif arg in ("Q", "K", "V", "O", "DO", "DQ", "DKV"):
            signature[arg] = "*bf16"
        else:
            signature[arg] = "fp32" if arg == "scale" else "i32"
        if signature[arg].startswith("*") or arg.startswith("stride"):
            attrs[(i,)] = [["tt.divisibility", 16]]
    src = triton.compiler.ASTSource(fn=fn, signature=signature, attrs=attrs, constexprs={
        (fn.arg_names.index(k),): v for k, v in constexprs.items() if signature.get(k) == "constexpr"})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                              options=dict(num_warps=num_warps, num_stages=num_stages))
    # the ptxas whose version the PTX was written for: TRITON_PTXAS_PATH where set (a newer CUDA's, whose PTX the
    # bundled ptxas refuses), else the bundled one
    ptxas = get_ptxas(90).path
    with tempfile.TemporaryDirectory() as tmp:
        with open(f"{tmp}/k.ptx", "w") as f:
            f.write(compiled.asm["ptx"])
        p = subprocess.run([ptxas, "-arch=sm_90a", "-v", f"{tmp}/k.ptx", "-o", f"{tmp}/k.cubin"],
                           capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{ptxas} exited {p.returncode}: {p.stderr.strip()} {p.stdout.strip()}")
    return p.stderr


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("kernel")
    p.add_argument("config", type=int, nargs=4, help="BLOCK_M BLOCK_N num_warps num_stages")
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--group", type=int, default=1)
    p.add_argument("--not-causal", action="store_true")
    a = p.parse_args()
    print(ptxas_report(a.kernel, *a.config, head_dim=a.head_dim, causal=not a.not_causal, group=a.group))
