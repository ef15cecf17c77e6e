# call 8: bench's six GPT-2 variants with the back-to-back column, nanoGPT's erf form (the README's table)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 560 python bench.py --autocast_residual=True --bench_dir=$OUT/erf > $OUT/bench.txt 2>&1; echo "rc $?" >> $OUT/bench.txt
grep -v "^\s*$" $OUT/bench.txt | tail -14
