# Call 6 (nvidia-h100-x1, carry .devdata): the LLaMA-style variant's six variants with the new default (cuBLAS without
# its workspace), then its graphed variants with --cublas_workspace=True, on one machine.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --bench_dir=$OUT/llama > $OUT/llama.txt 2>&1
echo "== llama rc=$?"; grep -A9 "^Training step" $OUT/llama.txt | cut -c1-230
timeout 150 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --cublas_workspace=True \
  --variants="kernels eager graphed,kernels compiled graphed" --bench_dir=/tmp/llama_ws > /tmp/llama_ws.txt 2>&1
echo "== llama workspace rc=$?"; grep -A3 "^Training step" /tmp/llama_ws.txt | tail -2 | cut -c1-75
