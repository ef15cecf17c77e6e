# Call 7 (nvidia-h100-x1, same warm machine, carry .devdata with .devdata/head = `git archive 3afaf68`):
# the eager pair before (head) and after (this tree), interleaved twice. Each run's output file is
# overwritten by the next of its tree; all four runs' lines are in output.txt (the call's printed tail).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for tree in head new head new; do
  dir=$([ $tree = head ] && echo .devdata/head || echo .)
  (cd $dir && timeout 150 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" > $OUT/bench_$tree.txt 2>&1)
  echo "$tree: $(grep -E '^ *(baseline|kernels) eager +[0-9]|eager step' $OUT/bench_$tree.txt | cut -c1-140 | tr '\n' '|')"
done
