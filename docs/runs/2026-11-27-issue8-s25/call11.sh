# call 11: the final tree: CUDA tests of what changed; bench's 'activation' step with tanh under 'auto' (which now
# takes the epilogue MLP unmeasured)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 240 python -m pytest -q -n 4 tests/test_choose.py tests/test_gelu_mlp.py tests/test_matmul.py \
  tests/test_model.py -k "not nothing" > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt
timeout 220 python bench.py --autocast_residual=True --gelu_approximate=tanh --recompute=activation --bench_dir=$OUT/act \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_act.txt 2>&1; echo "rc $?" >> $OUT/bench_act.txt
grep "gelu: " $OUT/bench_act.txt; grep -v "^\s*$" $OUT/bench_act.txt | tail -8
