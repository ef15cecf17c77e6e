# Call 4 (nvidia-h100-x1, carry .devdata): compile_model with the partitioner's switch (PARTITIONER_OPTIONS).
# The compile tests on CUDA, then GPT-2 124M: the six variants with recompute 'none', and 'activation' for the
# compiled baseline and the two graphed kernels variants.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 120 python -m pytest -q tests/test_model.py -k "compile_model or compile_writes" 2>&1 | grep -E "passed|failed|^E " | tail -4
timeout 290 python bench.py --autocast_residual=True --bench_dir=$OUT/bench_none > $OUT/bench_none.txt 2>&1
echo "== bench none rc=$?"; grep -A9 "^Training step" $OUT/bench_none.txt | cut -c1-230
timeout 170 python bench.py --autocast_residual=True --recompute=activation --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" \
  --bench_dir=$OUT/bench_activation > $OUT/bench_activation.txt 2>&1
echo "== bench activation rc=$?"; grep -A6 "^Training step" $OUT/bench_activation.txt | cut -c1-230
