# call 4: test_model's copies test on CUDA with fp16 (call 3 gave it 40 s, too few on this machine), then the six
# variants with the copies (the final tree) for the README's table
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 120 python -m pytest -q tests/test_model.py -k matmul_copies > $OUT/tests_model.txt 2>&1; echo "tests rc $?" >> $OUT/tests_model.txt
tail -2 $OUT/tests_model.txt; echo "t=$(( $(date +%s) - t0 ))"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 450 python bench.py --autocast_residual=True --bench_dir=/tmp/full > $OUT/bench.txt 2>&1; echo "rc $?" >> $OUT/bench.txt
echo "t=$(( $(date +%s) - t0 ))"; tail -16 $OUT/bench.txt
