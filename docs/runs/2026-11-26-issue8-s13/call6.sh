# Call 6 (nvidia-h100-x1, carry .devdata): the step-graph tests as changed after call 5 (the sparse embedding
# gradient replayed bit for bit on batches of distinct tokens), then bench.py's six variants with this session's tree.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 60 python -m pytest -q tests/test_step_graph.py > $OUT/tests_graph.txt 2>&1
echo "== tests step graph rc=$?"; grep FAILED $OUT/tests_graph.txt; tail -1 $OUT/tests_graph.txt
timeout 400 python bench.py --autocast_residual=True --bench_dir=$OUT/bench > $OUT/bench.txt 2>&1
echo "== bench rc=$?"; grep -A8 "^Training step" $OUT/bench.txt | cut -c1-200
