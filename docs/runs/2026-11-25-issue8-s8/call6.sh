# Call 6 (nvidia-h100-x1, carry .devdata): compiled models leave the casts to Inductor (no CastMatrices when
# torch.compile traces). probe_casts.py (which part of CastMatrices AOTAutograd gets wrong on CUDA); the cast
# test on CUDA; the six-variant table (compiled losses must agree again); GPT-2's eager pair from the tree
# before cast_per_block (.devdata/before) and this one, interleaved twice.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 100 python docs/runs/2026-11-25-issue8-s8/probe_casts.py > $OUT/probe_casts.txt 2>&1
echo "[rc=$?]" >> $OUT/probe_casts.txt; grep -v "^kernels:\|^number" $OUT/probe_casts.txt | tail -10
timeout 100 python -m pytest tests/test_model.py -q -k cast_per_block > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
tail -2 $OUT/tests.txt
timeout 220 python bench.py --autocast_residual=True --bench_dir=$OUT/bench_all > $OUT/bench_all.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_all.txt; grep -v "^number of\|^AdamW" $OUT/bench_all.txt | tail -14
for i in 1 2; do
  for tree in before after; do
    dir=$([ $tree = before ] && echo .devdata/before || echo .)
    (cd $dir && timeout 70 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" \
      --bench_dir=$OUT/bench_${tree}_$i) > $OUT/eager_${tree}_$i.txt 2>&1
    echo "$tree $i: $(grep -E '^ *(baseline|kernels) eager +[0-9]' $OUT/eager_${tree}_$i.txt | cut -c1-110 | tr '\n' '|')"
  done
done
