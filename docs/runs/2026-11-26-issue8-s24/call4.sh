# call 4: every MLP product through matmul_plan (weight gradients written in the weights' dtype): CUDA tests, the
# attention's products against plans (products_probe.py), bench's GPT-2 step with GELU's tanh form
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 150 python -m pytest -q -n 4 tests/test_gelu_mlp.py "tests/test_matmul.py::test_epilogue_plans_against_float64" \
  "tests/test_model.py::test_bf16_training_step_kernels_on_and_off_agree" \
  "tests/test_model.py::test_compile_model_gives_eagers_loss_and_gradients" > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt
timeout 90 python docs/runs/2026-11-26-issue8-s24/products_probe.py > $OUT/products.txt 2>&1; cat $OUT/products.txt
timeout 230 python bench.py --autocast_residual=True --gelu_approximate=tanh --bench_dir=$OUT/tanh \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_tanh.txt 2>&1; echo "rc $?" >> $OUT/bench_tanh.txt
grep -v "^\s*$" $OUT/bench_tanh.txt | tail -14
