# Ninth session, call 6 (nvidia-h100-x1, carry .devdata): bench.py now frees cuBLAS's workspaces between
# variants (call 5: 72-328 MiB left allocated before a variant, not freed by gc or Dynamo's reset).
# GPT-2, the six variants ('auto'), recompute='none' then 'activation'; LLaMA's four, the same two.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for r in none activation; do
  timeout 200 python bench.py --autocast_residual=True --recompute=$r --bench_dir=$OUT/bench_gpt2_$r > $OUT/gpt2_$r.txt 2>&1
  echo "== gpt2 $r"; grep -E "^\[|^ *(baseline|kernels) (eager|compiled)  |Triton for" $OUT/gpt2_$r.txt | cut -c1-170
done
V="baseline compiled,kernels compiled,kernels eager graphed,kernels compiled graphed"
for r in none activation; do
  timeout 150 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=$r --variants="$V" \
    --bench_dir=$OUT/bench_llama_$r > $OUT/llama_$r.txt 2>&1
  echo "== llama $r"; grep -E "^ *(baseline|kernels) (eager|compiled)  |Triton for" $OUT/llama_$r.txt | cut -c1-170
done
