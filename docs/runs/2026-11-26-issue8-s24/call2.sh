# call 2: the CUDA tests of the GELU-in-epilogues MLP, then bench's GPT-2 step with GELU's tanh form (every
# variant) and, for the same machine's reference, with nanoGPT's erf form
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 200 python -m pytest -q -n 4 tests/test_gelu_mlp.py tests/test_matmul.py \
  "tests/test_model.py::test_bf16_training_step_kernels_on_and_off_agree" \
  "tests/test_model.py::test_gelu_goes_into_the_matmuls_epilogues_only_where_they_have_it" \
  "tests/test_model.py::test_compile_model_gives_eagers_loss_and_gradients" > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -4 $OUT/tests.txt
timeout 230 python bench.py --autocast_residual=True --gelu_approximate=tanh --bench_dir=$OUT/tanh \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_tanh.txt 2>&1; echo "rc $?" >> $OUT/bench_tanh.txt
tail -25 $OUT/bench_tanh.txt
timeout 150 python bench.py --autocast_residual=True --bench_dir=$OUT/erf \
  --variants="baseline compiled,kernels compiled graphed" > $OUT/bench_erf.txt 2>&1; echo "rc $?" >> $OUT/bench_erf.txt
tail -20 $OUT/bench_erf.txt
