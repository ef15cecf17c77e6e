# Call 9 (nvidia-h100-x1, carry .devdata): the review's fixes on CUDA (TiedEmbedding returns the weight itself): the
# scatter and step-graph tests, and the two graphed variants once.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 100 python -m pytest -q tests/test_model.py -k "scatter" tests/test_step_graph.py > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; grep FAILED $OUT/tests.txt; tail -1 $OUT/tests.txt
timeout 150 python bench.py --autocast_residual=True --variants="kernels eager graphed,kernels compiled graphed" --bench_dir=$OUT/bench > $OUT/bench.txt 2>&1
echo "== bench rc=$?"; grep -A3 "^Training step" $OUT/bench.txt | tail -2 | cut -c1-110
