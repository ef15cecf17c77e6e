"""fp8_probe.py [tokens]: would fp8 matmuls buy GPT-2 124M's step the ~4 ms docs/perf-notes.md
puts at their ceiling? For each matmul of a step (per layer: qkv, attention out, fc, mlp out; the
LM head), forward, input gradient and weight gradient: bf16 torch.mm against torch._scaled_mm on
e4m3 operands (e5m2 for the output gradient) with per-tensor scales, and what making the fp8
operands costs (amax, scale, cast; the weight gradient wants both operands transposed, so a second
layout). Medians of CUDA-event timings; on a CPU it only checks that it runs (small sizes)."""
import statistics
import sys

import torch

cuda = torch.cuda.is_available()
device = 'cuda' if cuda else 'cpu'
M = int(sys.argv[1]) if len(sys.argv) > 1 else (12 * 1024 if cuda else 64)
d, V, layers = (768, 50304, 12) if cuda else (64, 96, 2)
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def timed(fn, reps=30 if cuda else 1):
    fn()
    if not cuda:
        return 0.0
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)  # us


def quantize(t, dtype):
    """t scaled so its largest magnitude is the format's largest, cast; and the scale to undo it."""
    scale = torch.finfo(dtype).max / t.abs().amax().float().clamp(min=1e-12)
    return (t.float() * scale).to(dtype), scale.reciprocal()


torch._dynamo.config.recompile_limit = 64  # one graph per operand shape and format
quantize_c = torch.compile(quantize) if cuda else quantize


def fp8_mm(a, b_t, a_dtype, b_dtype):
    """a (m, k) @ b_t.T, b_t (n, k) row-major: what _scaled_mm takes as a column-major (k, n)."""
    qa, sa = quantize_c(a, a_dtype)
    qb, sb = quantize_c(b_t, b_dtype)
    return torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


shapes = [('qkv', d, 3 * d, layers), ('attn out', d, d, layers), ('fc', d, 4 * d, layers),
          ('mlp out', 4 * d, d, layers), ('lm head', d, V, 1)]
print(f"{torch.cuda.get_device_name() if cuda else 'cpu'}, {M} tokens; us per call (bf16 mm | fp8 with "
      f"its casts and transposed copies | the fp8 product alone)")
total_bf16 = total_fp8 = total_fp8_mm = 0.0
for name, k_in, n_out, count in shapes:
    x = torch.randn(M, k_in, device=device, dtype=torch.bfloat16)
    w = torch.randn(n_out, k_in, device=device, dtype=torch.bfloat16) * k_in ** -0.5
    dy = torch.randn(M, n_out, device=device, dtype=torch.bfloat16) * 1e-3
    # (label, the bf16 product, the fp8 operands from the bf16 tensors: a, b_t (b = b_t.T), their formats)
    products = [('forward', lambda: x @ w.t(), lambda: (x, w, E4M3, E4M3)),
                ('input grad', lambda: dy @ w, lambda: (dy, w.t().contiguous(), E5M2, E4M3)),
                ('weight grad', lambda: dy.t() @ x, lambda: (dy.t().contiguous(), x.t().contiguous(), E5M2, E4M3))]
    for label, bf16, operands in products:
        ref = bf16().float()
        rel = ((fp8_mm(*operands()).float() - ref).norm() / ref.norm()).item()
        a, b_t, fa, fb = operands()
        qa, sa = quantize_c(a, fa)
        qb, sb = quantize_c(b_t, fb)
        t_bf16 = timed(bf16)
        t_fp8 = timed(lambda: fp8_mm(*operands()))  # the transposed copies counted: a real one fuses them into the cast
        t_mm = timed(lambda: torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))
        total_bf16, total_fp8, total_fp8_mm = (total_bf16 + count * t_bf16, total_fp8 + count * t_fp8,
                                               total_fp8_mm + count * t_mm)
        print(f"{name:9s} {label:11s} x{count:2d}: {t_bf16:8.1f} | {t_fp8:8.1f} | {t_mm:8.1f}   relative error {rel:.3f}")
print(f"per step, ms: bf16 {total_bf16 / 1e3:.2f}, fp8 with casts and copies {total_fp8 / 1e3:.2f}, "
      f"fp8 products alone {total_fp8_mm / 1e3:.2f}")
