# Call 3 (nvidia-h100-x1, run with ROUNDS=1; carry .devdata with .devdata/head = `git archive 3afaf68`, the code before
# this session's trims): CUDA tests of what changed, host us per piece (pieces.py, new code), then the
# eager pair as the issue measures it ('auto' choosing, each tree its own kernels_cache.json), before
# (head) and after (this tree), interleaved, two rounds.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest -q tests/test_norm.py tests/test_compile_writes.py tests/test_launch.py tests/test_choose.py \
  > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
timeout 150 python docs/runs/2026-11-25-issue8-s7/pieces.py > $OUT/pieces.txt 2>&1; echo "[rc=$?]" >> $OUT/pieces.txt
for round in ${ROUNDS:-1 2}; do
  for tree in head new; do
    dir=$([ $tree = head ] && echo .devdata/head || echo .)
    (cd $dir && timeout 150 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" > $OUT/bench_${tree}_$round.txt 2>&1)
    echo "$tree round $round: $(grep -E '^ *(baseline|kernels) eager +[0-9]|eager step|^kernels eager:' $OUT/bench_${tree}_$round.txt | cut -c1-150 | tr '\n' '|')"
  done
done
grep -E "^  (LN|attn|launch|rows_of|as_rows|partial)" $OUT/pieces.txt
