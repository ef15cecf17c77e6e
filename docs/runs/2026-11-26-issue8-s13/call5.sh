# Call 5 (nvidia-h100-x1, carry .devdata): the CUDA tests call 4's time limit cut (step graph first), then the
# per-kernel profile of kernels eager graphed with this session's changes (against call 1's).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 100 python -m pytest -q tests/test_step_graph.py tests/test_linear_cross_entropy.py -k "not memory" > $OUT/tests_graph_lce.txt 2>&1
echo "== tests step graph, lce rc=$?"; grep FAILED $OUT/tests_graph_lce.txt; tail -1 $OUT/tests_graph_lce.txt
timeout 200 python -m pytest -q -x tests/test_norm.py > $OUT/tests_norm.txt 2>&1
echo "== tests norm rc=$?"; grep FAILED $OUT/tests_norm.txt; tail -1 $OUT/tests_norm.txt
d=$OUT/prof_kernels_eager_graphed
timeout 150 python bench.py --autocast_residual=True --profile --profile_steps=5 --profile_variant="kernels eager graphed" --bench_dir=$d > $d.txt 2>&1
echo "== profile rc=$?"; rm -f $d/trace.json; head -50 $d/profile.txt | cut -c1-150
