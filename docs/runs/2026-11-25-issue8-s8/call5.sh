# Call 5 (nvidia-h100-x1, carry .devdata): CastMatrices' copies as separate tensors instead of views of one
# buffer. The new cast test (eager and aot_eager against autocast, bit for bit) on this tree and on the
# views version (.devdata/views: commit 6a1604b's model.py with this test; expected to fail compiled);
# compiled_casts.py; the six-variant table; one eager pair of the tree before cast_per_block and of this one.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 120 python -m pytest tests/test_model.py -q -k cast_per_block > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
(cd .devdata/views && timeout 120 python -m pytest tests/test_model.py -q -k cast_per_block) > $OUT/tests_views.txt 2>&1; echo "[rc=$?]" >> $OUT/tests_views.txt
tail -2 $OUT/tests.txt; grep -E "^FAILED|passed|failed" $OUT/tests_views.txt | cut -c1-160 | tail -8
timeout 150 python docs/runs/2026-11-25-issue8-s8/compiled_casts.py > $OUT/compiled_casts.txt 2>&1
echo "[rc=$?]" >> $OUT/compiled_casts.txt; grep -E "^(torch|triton)|rc=" $OUT/compiled_casts.txt | cut -c1-150
timeout 240 python bench.py --autocast_residual=True --bench_dir=$OUT/bench_all > $OUT/bench_all.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_all.txt; grep -v "^number of\|^AdamW" $OUT/bench_all.txt | tail -14
for tree in before after; do
  dir=$([ $tree = before ] && echo .devdata/before || echo .)
  (cd $dir && timeout 90 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" \
    --bench_dir=$OUT/bench_$tree) > $OUT/eager_$tree.txt 2>&1
  echo "$tree: $(grep -E '^ *(baseline|kernels) eager +[0-9]' $OUT/eager_$tree.txt | cut -c1-110 | tr '\n' '|')"
done
