# Call 4 (nvidia-h100-x1, carry .devdata with .devdata/head as in call 3): the CUDA tests call 3's
# time limit cut (test_norm.py and the rest), then two more rounds of the eager pair, head and new.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 330 python -m pytest -q tests/test_norm.py tests/test_compile_writes.py tests/test_launch.py tests/test_choose.py \
  > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
for round in 2 3; do
  for tree in head new; do
    dir=$([ $tree = head ] && echo .devdata/head || echo .)
    (cd $dir && timeout 120 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" > $OUT/bench_${tree}_$round.txt 2>&1)
    echo "$tree round $round: $(grep -E '^ *(baseline|kernels) eager +[0-9]|eager step|^kernels eager:' $OUT/bench_${tree}_$round.txt | cut -c1-150 | tr '\n' '|')"
  done
done
