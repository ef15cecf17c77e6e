# Call 9 (nvidia-h100-x1, carry .devdata): bench.py --memory after call 8, Inductor's buffers of one kind grouped across
# layers: its tests on CUDA; GPT-2's graphed compiled step with recompute='activation', then with 'none'.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest -q tests/test_bench.py -k memory 2>&1 | tail -2
for r in activation none; do
  timeout 240 python bench.py --memory --memory_variant="kernels compiled graphed" --recompute=$r \
    --autocast_residual=True --bench_dir=$OUT/mem_$r > $OUT/memory_$r.txt 2>&1; echo "memory $r rc=$?"
  head -24 $OUT/mem_$r/memory.txt | cut -c1-200
done
