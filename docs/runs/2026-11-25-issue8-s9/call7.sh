# Ninth session, call 7 (nvidia-h100-x1, carry .devdata): after the review. bench.py frees cuBLAS's workspaces
# after each variant's build too (the kernels variants' op timing ran on side streams after call 6's cleanup),
# and passes use_triton_<op> on every device; LinearOfActivation takes the activation output's dtype.
# CUDA tests, then GPT-2's six variants with recompute='none' and 'activation' in turn.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python -m pytest tests/test_gelu.py tests/test_swiglu.py tests/test_model.py tests/test_compile_writes.py -q \
  -k "gives_the_output or matches_reference or torch_compile or recompute or inductor or cast_per_block" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -2 $OUT/tests.txt; grep ^FAILED $OUT/tests.txt | head
for r in none activation; do
  timeout 200 python bench.py --autocast_residual=True --recompute=$r --bench_dir=$OUT/bench_gpt2_$r > $OUT/gpt2_$r.txt 2>&1
  echo "== gpt2 $r"; grep -E "^\[|^ *(baseline|kernels) (eager|compiled)  |Triton for|losses agree" $OUT/gpt2_$r.txt | cut -c1-170
done
