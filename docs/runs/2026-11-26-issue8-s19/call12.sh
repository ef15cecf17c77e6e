# Call 12 (nvidia-h100-x1, carry .devdata): the memory point on the final tree: GPT-2 with recompute='activation' and
# LLaMA with 'mlp', each against its compiled baseline (now run with cuBLAS's default workspace, as nanoGPT runs).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
V="baseline compiled,kernels eager graphed,kernels compiled graphed"
timeout 280 python bench.py --autocast_residual=True --recompute=activation --variants="$V" --bench_dir=/tmp/a > $OUT/gpt2_activation.txt 2>&1
echo "gpt2 activation rc=$?"; grep -A5 "^Training step" $OUT/gpt2_activation.txt | cut -c1-260
timeout 280 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=mlp --variants="$V" --bench_dir=/tmp/m > $OUT/llama_mlp.txt 2>&1
echo "llama mlp rc=$?"; grep -A5 "^Training step" $OUT/llama_mlp.txt | cut -c1-260
