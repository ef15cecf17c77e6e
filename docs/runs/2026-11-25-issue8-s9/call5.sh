# Ninth session, call 5 (nvidia-h100-x1, carry .devdata): with_y a constexpr again (as a run-time flag the
# Triton GELU took 0.233-0.235 ms forward + backward in call 4's 'auto' measurements, against 0.213 in calls 1-3),
# bench.py dropping (and reporting) what a variant leaves allocated before the next, and taking use_triton_<op>.
# CUDA tests; GPT-2 with the Triton MLP forced, recompute='none' then 'activation' (same variants, same order);
# the eager pair with recompute='activation' ('auto').
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 240 python -m pytest tests/test_gelu.py tests/test_swiglu.py tests/test_model.py tests/test_compile_writes.py -q \
  -k "gives_the_output or matches_reference or torch_compile or recompute or inductor" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -2 $OUT/tests.txt; grep ^FAILED $OUT/tests.txt | head
V="baseline compiled,kernels compiled,kernels eager graphed,kernels compiled graphed"
for r in none activation; do
  timeout 150 python bench.py --autocast_residual=True --use_triton_mlp=True --recompute=$r --variants="$V" \
    --bench_dir=$OUT/bench_$r > $OUT/gpt2_$r.txt 2>&1
  echo "== $r"; grep -E "^\[|^ *(baseline|kernels) (eager|compiled)  " $OUT/gpt2_$r.txt | cut -c1-150
done
timeout 100 python bench.py --autocast_residual=True --recompute=activation --variants="baseline eager,kernels eager" \
  --bench_dir=$OUT/bench_eager > $OUT/eager_activation.txt 2>&1
echo "== eager pair, activation"; grep -E "^ *(baseline|kernels) eager  |  gelu" $OUT/eager_activation.txt | cut -c1-150
