# Ninth session, call 2 (nvidia-h100-x1, carry .devdata): recompute='activation' (LinearOfActivation,
# the GELU / SwiGLU backward kernels writing their output again). CUDA tests of what changed, then
# GPT-2's compiled and graphed variants with recompute='none' and 'activation' in turn.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 240 python -m pytest tests/test_gelu.py tests/test_swiglu.py tests/test_model.py tests/test_compile_writes.py -q \
  -k "gives_the_output or matches_reference or torch_compile or recompute or inductor" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -2 $OUT/tests.txt
V="baseline compiled,kernels compiled,kernels eager graphed,kernels compiled graphed"
for r in none activation; do
  timeout 150 python bench.py --autocast_residual=True --recompute=$r --variants="$V" --bench_dir=$OUT/bench_$r > $OUT/gpt2_$r.txt 2>&1
  echo "== $r"; grep -E "^ *(baseline|kernels) (eager|compiled)" $OUT/gpt2_$r.txt | cut -c1-150
done
