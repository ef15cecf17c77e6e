# Call 11 (nvidia-h100-x1, carry .devdata): bench.py --memory with the leftovers dropped after the model is built (call 10
# counted ~30 MiB of cuBLAS workspaces from the kernels' op timing in "before"): GPT-2's graphed compiled step,
# recompute='activation'.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 240 python bench.py --memory --memory_variant="kernels compiled graphed" --recompute=activation \
  --autocast_residual=True --bench_dir=$OUT/mem_activation > $OUT/memory_activation.txt 2>&1; echo "memory rc=$?" | tee $OUT/stdout.txt
head -4 $OUT/mem_activation/memory.txt | cut -c1-250
