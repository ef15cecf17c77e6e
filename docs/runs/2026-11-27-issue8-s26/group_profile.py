"""bench.py's per-kernel profile (Inductor's kernels named first: one fuses the head's cast into the loss) (bench.json's 'profile' us per step) grouped by kind of work."""
import json
import sys

GROUPS = [("Inductor's kernels (casts, embedding, sums)", ("triton_",)),
          ("matmuls (cuBLAS / cuBLASLt, GELU epilogues included)", ("nvjet", "xmma", "gemm")),
          ("attention", ("_flash_attention",)), ("AdamW (torch's fused)", ("FusedOpti",)),
          ("norms", ("_norm_",)), ("GELU passes", ("_gelu_",)), ("the loss's row kernels", ("_linear_cross_entropy",))]
for path in sys.argv[1:]:
    prof = json.load(open(path))["profile"]
    kernels = prof["per_kernel_us"]
    sums, rest = {name: 0.0 for name, _ in GROUPS}, 0.0
    for kernel, us in kernels.items():
        group = next((name for name, keys in GROUPS if any(k in kernel for k in keys)), None)
        if group:
            sums[group] += us
        else:
            rest += us
    print(path, {k: v for k, v in prof.items() if not isinstance(v, dict)})
    for name, us in sums.items():
        print(f"  {name:55s} {us / 1e3:6.2f} ms")
    print(f"  {'other (memsets, copies, torch kernels)':55s} {rest / 1e3:6.2f} ms")
    print(f"  {'sum':55s} {(sum(sums.values()) + rest) / 1e3:6.2f} ms")
