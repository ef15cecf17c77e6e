"""ptxas's report (registers, spills) for a Triton kernel built for sm_90a on this CPU machine.
report(fn, signature, constexprs, num_warps, num_stages) -> text."""
import os, subprocess, tempfile
os.environ.pop("TRITON_INTERPRET", None)
import triton
from triton.backends.compiler import GPUTarget

def report(fn, signature, constexprs, num_warps, num_stages=3, sass=False):
    attrs = {(i,): [["tt.divisibility", 16]] for i, a in enumerate(fn.arg_names)
             if signature.get(a, "").startswith("*") or a.startswith("stride")}
    sig = {a: signature.get(a, "constexpr" if a in constexprs else "i32") for a in fn.arg_names}
    src = triton.compiler.ASTSource(fn=fn, signature=sig, attrs=attrs,
                                    constexprs={(fn.arg_names.index(k),): v for k, v in constexprs.items()})
    c = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=num_warps, num_stages=num_stages))
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    with tempfile.TemporaryDirectory() as tmp:
        open(f"{tmp}/k.ptx", "w").write(c.asm["ptx"])
        out = subprocess.run([ptxas, "-arch=sm_90a", "-v", f"{tmp}/k.ptx", "-o", f"{tmp}/k.cubin"],
                             capture_output=True, text=True, check=True).stderr
        if sass:
            dis = os.path.join(os.path.dirname(ptxas), "cuobjdump")
            out += subprocess.run([dis, "-sass", f"{tmp}/k.cubin"], capture_output=True, text=True).stdout if os.path.exists(dis) else "(no cuobjdump)"
    return out
