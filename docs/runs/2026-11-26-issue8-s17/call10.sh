# Call 10 (nvidia-h100-x1, carry .devdata): call 9's 100 MiB chunk left LLaMA's 'activation' step 8 MiB over 0.6x
# (3,873 MiB against 3,865); a 64 MiB chunk (19 chunks of ~648 rows).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=activation --loss_chunk_mib=64 \
  --variants="baseline compiled,kernels compiled graphed" --bench_dir=/tmp/l > $OUT/bench_llama_chunk64.txt 2>&1
echo "== llama activation chunk 64 rc=$?"; grep -A4 "^Training step" $OUT/bench_llama_chunk64.txt | tail -3 | cut -c1-200
grep "cross_entropy: " $OUT/bench_llama_chunk64.txt | cut -c1-260
