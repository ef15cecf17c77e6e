# call 6: the final tree (after the review): the CUDA tests of what changed, then bench's GPT-2 step with GELU's tanh form
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 270 python -m pytest -q -n 4 tests/test_gelu_mlp.py tests/test_matmul.py tests/test_choose.py tests/test_model.py \
  -k "not test_model or recompute_gives or bf16_training_step or compile_model or epilogues or kernels_on_and_off" \
  > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -4 $OUT/tests.txt
timeout 230 python bench.py --autocast_residual=True --gelu_approximate=tanh --bench_dir=$OUT/tanh \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_tanh.txt 2>&1; echo "rc $?" >> $OUT/bench_tanh.txt
grep -v "^\s*$" $OUT/bench_tanh.txt | tail -9
