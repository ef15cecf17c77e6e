# call 4: the final tree's CUDA tests of what uses kernels.adamw besides test_adamw (call 3: 82 passed): Muon's AdamW
# groups, StepGraph, and train.py's graphed, resumed, loss-falls and Muon runs
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
t0=$(date +%s)
timeout 150 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph_trains_and_resumes or falls or resume_continues or muon_trains" \
  > $OUT/tests_train.txt 2>&1; echo "tests rc $?" >> $OUT/tests_train.txt; tail -2 $OUT/tests_train.txt; echo "t=$(( $(date +%s) - t0 ))"
timeout 150 python -m pytest -q tests/test_step_graph.py tests/test_muon.py > $OUT/tests.txt 2>&1
echo "tests rc $?" >> $OUT/tests.txt; tail -2 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
