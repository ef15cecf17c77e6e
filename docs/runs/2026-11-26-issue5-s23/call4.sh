# Call 4 (nvidia-h100-x1, carry .devdata): the model and step-graph tests (the loss's products inside torch.compile and
# CUDA graphs), which call 3's 200 s cut off with no failure; then issue 8's GPT-2 variants on this tree (three of six).
export PYTHONUNBUFFERED=1
timeout 250 python -m pytest -q -n 6 tests/test_model.py tests/test_step_graph.py > $OUT/tests_model.txt 2>&1; echo "model tests rc=$?"; tail -4 $OUT/tests_model.txt
KERNELS_AUTOTUNE=0 timeout 300 python bench.py --autocast_residual=True --bench_dir=/tmp/n \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_e2e.txt 2>&1; echo "e2e rc=$?"
grep -A6 "^Training step" $OUT/bench_e2e.txt | cut -c1-260; grep "losses" $OUT/bench_e2e.txt | cut -c1-260
