# device call 3 (nvidia-h100-x1): the eager variants of bench.py with the lean launch, host-side
# cdiv/next_power_of_2, and 'auto''s eager step check (model.eager_step_choice); then the CUDA tests
# of what changed (they launch through the lean launch in eager mode).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 240 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" --bench_dir=$OUT/bench_eager \
  > $OUT/bench_eager.txt 2>&1; echo "[rc=$?]" >> $OUT/bench_eager.txt
grep -v "^number of\|^AdamW" $OUT/bench_eager.txt | tail -22
timeout 320 python -m pytest -q tests/test_launch.py tests/test_choose.py tests/test_backend_rule.py tests/test_norm.py \
  tests/test_gelu.py tests/test_attention.py tests/test_linear_cross_entropy.py tests/test_rotary.py tests/test_swiglu.py \
  > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
tail -5 $OUT/tests.txt
