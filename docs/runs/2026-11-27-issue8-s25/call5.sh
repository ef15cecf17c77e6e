# call 5: the final tree: CUDA tests of what changed (time_ms back to back, bench's JSON, the MLP and matmul after the
# revert); bench's table with the back-to-back column, GELU's tanh form, four variants
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 200 python -m pytest -q -n 4 tests/test_choose.py tests/test_bench.py tests/test_gelu_mlp.py tests/test_matmul.py \
  > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt
timeout 330 python bench.py --autocast_residual=True --gelu_approximate=tanh --bench_dir=$OUT/tanh \
  --variants="baseline eager,baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_tanh.txt 2>&1
echo "rc $?" >> $OUT/bench_tanh.txt
grep -v "^\s*$" $OUT/bench_tanh.txt | tail -12
