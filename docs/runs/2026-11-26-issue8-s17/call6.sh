# Call 6 (nvidia-h100-x1, carry .devdata): kernels='auto' with memory deciding first where recompute is asked
# (kernels.choose.by_memory; call 5's compiled graphed step took PyTorch's loss on time and peaked at 4,987 MiB),
# GELU's new backward tile: the 'activation' tables of GPT-2 and LLaMA, and tests/test_choose.py on CUDA.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
V="baseline compiled,kernels compiled graphed,kernels eager graphed"
timeout 230 python bench.py --autocast_residual=True --recompute=activation --variants="$V" --bench_dir=/tmp/a \
  > $OUT/bench_activation.txt 2>&1
echo "== gpt2 activation rc=$?"; grep -A5 "^Training step" $OUT/bench_activation.txt | tail -4 | cut -c1-200
grep "cross_entropy: " $OUT/bench_activation.txt | cut -c1-250
timeout 230 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=activation --variants="$V" \
  --bench_dir=/tmp/l > $OUT/bench_llama_activation.txt 2>&1
echo "== llama activation rc=$?"; grep -A5 "^Training step" $OUT/bench_llama_activation.txt | tail -4 | cut -c1-200
grep "cross_entropy: " $OUT/bench_llama_activation.txt | cut -c1-250
timeout 120 python -m pytest -q tests/test_choose.py 2>&1 | tail -1
