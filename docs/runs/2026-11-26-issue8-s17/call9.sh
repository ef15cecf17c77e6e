# Call 9 (nvidia-h100-x1, carry .devdata): LLaMA-style with 'activation' came to 0.61x of its compiled baseline's
# memory (call 6: 3,957 MiB against 6,441; 0.6x is 3,865). The loss's chunk is the knob left: 100 MiB instead of the
# op's 200 (12 chunks of 1024 rows instead of 6 of 2048).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 230 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=activation --loss_chunk_mib=100 \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" --bench_dir=/tmp/l > $OUT/bench_llama_chunk100.txt 2>&1
echo "== llama activation chunk 100 rc=$?"; grep -A5 "^Training step" $OUT/bench_llama_chunk100.txt | tail -4 | cut -c1-200
grep "cross_entropy: " $OUT/bench_llama_chunk100.txt | cut -c1-260
