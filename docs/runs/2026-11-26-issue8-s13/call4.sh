# Call 4 (nvidia-h100-x1, carry .devdata): with the norm's partial sums in columns too; CUDA tests of what changed,
# then this tree and the one before the session (git archive 903a85d in .devdata/head) in turn.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 150 python -m pytest -q tests/test_model.py -k "sparse_embedding or cast_per_block or recompute_activation or loss_path" > $OUT/tests_model.txt 2>&1
echo "== tests model rc=$?"; tail -2 $OUT/tests_model.txt
timeout 120 python -m pytest -q tests/test_norm.py tests/test_linear_cross_entropy.py tests/test_step_graph.py -k "not memory" > $OUT/tests_ops.txt 2>&1
echo "== tests norm, lce, step graph rc=$?"; grep FAILED $OUT/tests_ops.txt; tail -1 $OUT/tests_ops.txt
V="baseline eager,kernels eager,kernels eager graphed,kernels compiled graphed"
for run in new old; do
  d=.; [ $run = old ] && d=.devdata/head
  (cd $d && timeout 150 python bench.py --autocast_residual=True --variants="$V" --bench_dir=$OUT/bench_$run > $OUT/bench_$run.txt 2>&1)
  echo "== $run rc=$?"; grep -A6 "^Training step" $OUT/bench_$run.txt | cut -c1-120
done
