# Call 2 (nvidia-h100-x1, carry .devdata): the tied embedding's gradient handed over sparse in the eager step,
# wpe as a slice, the fused loss's weight gradient in the weight's dtype; CUDA tests, the norm partial sums'
# layouts (partial_sums.py), then this tree and the one before (git archive 903a85d in .devdata/head) in turn.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s13
timeout 100 python -m pytest -q tests/test_model.py -k "sparse_embedding or cast_per_block or recompute_activation or loss_path" > $OUT/tests_model.txt 2>&1
echo "== tests model rc=$?"; tail -2 $OUT/tests_model.txt
timeout 100 python -m pytest -q tests/test_linear_cross_entropy.py tests/test_step_graph.py -k "not memory" > $OUT/tests_lce.txt 2>&1
echo "== tests lce, step graph rc=$?"; tail -2 $OUT/tests_lce.txt
timeout 60 python $R/partial_sums.py > $OUT/partial_sums.txt 2>&1; cat $OUT/partial_sums.txt
V="baseline eager,kernels eager,kernels eager graphed,kernels compiled graphed"
for run in new old; do
  d=.; [ $run = old ] && d=.devdata/head
  (cd $d && timeout 150 python bench.py --autocast_residual=True --variants="$V" --bench_dir=$OUT/bench_$run > $OUT/bench_$run.txt 2>&1)
  echo "== $run rc=$?"; grep -A6 "^Training step" $OUT/bench_$run.txt
done
