# Ninth session, call 4 (nvidia-h100-x1, carry .devdata): after call 3's probe, the backward kernels take
# with_y at run time (one compiled kernel) and LinearOfActivation's backward runs outside autocast.
# The CUDA tests again, then bench's six variants with recompute='activation' and the four of call 3 with 'none'.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 240 python -m pytest tests/test_gelu.py tests/test_swiglu.py tests/test_model.py tests/test_compile_writes.py -q \
  -k "gives_the_output or matches_reference or torch_compile or recompute or inductor" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -2 $OUT/tests.txt; grep ^FAILED $OUT/tests.txt | head
timeout 200 python bench.py --autocast_residual=True --recompute=activation --bench_dir=$OUT/bench_activation > $OUT/gpt2_activation.txt 2>&1
echo "== activation"; grep -E "^ *(baseline|kernels) (eager|compiled)" $OUT/gpt2_activation.txt | cut -c1-150
timeout 150 python bench.py --autocast_residual=True --variants="baseline compiled,kernels compiled,kernels eager graphed,kernels compiled graphed" \
  --bench_dir=$OUT/bench_none > $OUT/gpt2_none.txt 2>&1
echo "== none"; grep -E "^ *(baseline|kernels) (eager|compiled)" $OUT/gpt2_none.txt | cut -c1-150
