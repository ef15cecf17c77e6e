# Call 9 (nvidia-h100-x1, carry .devdata): LLaMA's eager pair with this session's code.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 165 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --variants="baseline eager,kernels eager" \
  --bench_dir=$OUT/bench_llama_eager > $OUT/bench_llama_eager.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_llama_eager.txt
