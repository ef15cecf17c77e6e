# Tenth session, call 9 (nvidia-h100-x1, carry .devdata): LLaMA's six variants with compile_model (combo kernels);
# GPT-2's eager pair once more (the eager target's run count).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
show() { grep -E "^ *(baseline|kernels) (eager|compiled)|Triton for|losses agree|rror" $1 | cut -c1-170; }
timeout 300 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --bench_dir=$OUT/bench_llama > $OUT/llama.txt 2>&1
echo "== llama rc=$?"; show $OUT/llama.txt
timeout 150 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" --bench_dir=$OUT/bench_eager > $OUT/gpt2_eager.txt 2>&1
echo "== gpt2 eager pair rc=$?"; show $OUT/gpt2_eager.txt
