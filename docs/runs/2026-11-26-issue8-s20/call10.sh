# Call 10 (nvidia-h100-x1, carry .devdata): bench.py --memory after a review (free_requested, a graphed variant recorded
# with cuBLAS as StepGraph records, leftovers dropped first, bench.json's breakdown): its tests on CUDA, then GPT-2's
# graphed compiled step with recompute='activation' again.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
{ timeout 200 python -m pytest -q tests/test_bench.py -k memory 2>&1 | tail -2
  timeout 240 python bench.py --memory --memory_variant="kernels compiled graphed" --recompute=activation \
    --autocast_residual=True --bench_dir=$OUT/mem_activation > $OUT/memory_activation.txt 2>&1; echo "memory rc=$?"
  python bench.py --memory --memory_variant="kernels compiled grapht" --bench_dir=/tmp/x 2>&1 | tail -1
} | tee $OUT/stdout.txt
head -20 $OUT/mem_activation/memory.txt | cut -c1-200
