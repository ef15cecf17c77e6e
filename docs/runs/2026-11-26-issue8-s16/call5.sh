# Call 5 (nvidia-h100-x1, carry .devdata): LLaMA-style 124M (RMSNorm, rotary, SwiGLU, GQA 12/4) with recompute 'none'
# and 'activation', the compiled baseline and the two graphed kernels variants.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
V="baseline compiled,kernels compiled graphed,kernels eager graphed"
for r in activation none; do
  timeout 200 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=$r --variants="$V" \
    --bench_dir=$OUT/llama_$r > $OUT/llama_$r.txt 2>&1
  echo "== llama $r rc=$?"; grep -A6 "^Training step" $OUT/llama_$r.txt | cut -c1-230
done
