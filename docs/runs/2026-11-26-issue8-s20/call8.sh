# Call 8 (nvidia-h100-x1, carry .devdata): bench.py --memory, new: its tests on CUDA, then where GPT-2's graphed compiled
# step with recompute='activation' peaks (recorded un-graphed, with the ops chosen for the graphed step).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest -q tests/test_bench.py -k memory 2>&1 | tail -2
timeout 330 python bench.py --memory --memory_variant="kernels compiled graphed" --recompute=activation \
  --autocast_residual=True --bench_dir=$OUT/mem > $OUT/memory_activation.txt 2>&1; echo "memory rc=$?"
cat $OUT/mem/memory.txt | cut -c1-180
