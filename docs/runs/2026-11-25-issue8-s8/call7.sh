# Call 7 (nvidia-h100-x1, carry .devdata): probe_casts.py with Block.matrices' compile guard taken out (call 6
# ran it guarded: void); LLaMA's eager pair from the tree before cast_per_block and this one.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 100 python docs/runs/2026-11-25-issue8-s8/probe_casts.py > $OUT/probe_casts.txt 2>&1
echo "[rc=$?]" >> $OUT/probe_casts.txt; grep -v "^kernels:\|^number" $OUT/probe_casts.txt | tail -13
for tree in before after; do
  dir=$([ $tree = before ] && echo .devdata/before || echo .)
  (cd $dir && timeout 120 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True \
    --variants="baseline eager,kernels eager" --bench_dir=$OUT/bench_llama_$tree) > $OUT/llama_eager_$tree.txt 2>&1
  echo "$tree: $(grep -E '^ *(baseline|kernels) eager +[0-9]' $OUT/llama_eager_$tree.txt | cut -c1-110 | tr '\n' '|')"
done
