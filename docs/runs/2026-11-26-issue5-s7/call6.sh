# Call 6 (nvidia-h100-x1, carry .devdata): LLaMA's six variants against its PyTorch baseline (now with the unfused loss
# and the split-then-transpose attention path), then GPT-2's eager pair again and nanoGPT's own eager bench.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 360 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --bench_dir=$OUT/llama > $OUT/llama.txt 2>&1
echo "== llama rc=$?"; grep -A10 "^Training step" $OUT/llama.txt
timeout 120 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" --bench_dir=$OUT/gpt2_eager > $OUT/gpt2_eager.txt 2>&1
echo "== gpt2 eager pair rc=$?"; grep -A5 "^Training step" $OUT/gpt2_eager.txt
cd .devdata/nanogpt
timeout 40 python bench.py --real_data=False --compile=False > $OUT/nanogpt_eager.txt 2>&1; echo "== nanoGPT eager rc=$?"; tail -1 $OUT/nanogpt_eager.txt
