# device call 1 (nvidia-h100-x1): is fp8 worth it (the probe's per-matmul bf16 vs fp8 timings), and
# does Inductor's max-autotune (Triton GEMM templates, epilogues fused into them) beat cuBLAS + our
# kernels on the whole step? (compile_mode='default' was measured in earlier sessions: 25.43 ms.)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 120 python docs/runs/2026-11-25-issue8-s4/fp8_probe.py > $OUT/fp8_probe.txt 2>&1; echo "[rc=$?]" >> $OUT/fp8_probe.txt
tail -20 $OUT/fp8_probe.txt
mode=max-autotune-no-cudagraphs
timeout 440 python bench.py --compile_mode=$mode --bench_dir=$OUT/bench_$mode \
  --variants="baseline compiled,kernels compiled graphed" > $OUT/bench_$mode.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_$mode.txt
tail -12 $OUT/bench_$mode.txt
