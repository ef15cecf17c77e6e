# Call 2 (nvidia-h100-x1, carry .devdata): cast_per_block on CUDA. The model's CUDA tests and the step
# graph's (the cast inside a recorded step), then GPT-2's eager pair from the tree before the change
# (.devdata/before = git archive 17cb04e) and this one, interleaved twice.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 220 python -m pytest tests/test_model.py tests/test_step_graph.py -q -x -k "not wgmma_async" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
for i in 1 2; do
  for tree in before after; do
    dir=$([ $tree = before ] && echo .devdata/before || echo .)
    (cd $dir && timeout 110 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" \
      --bench_dir=$OUT/bench_${tree}_$i) > $OUT/eager_${tree}_$i.txt 2>&1
    echo "$tree $i: $(grep -E '^ *(baseline|kernels) eager +[0-9]' $OUT/eager_${tree}_$i.txt | cut -c1-110 | tr '\n' '|')"
  done
done
