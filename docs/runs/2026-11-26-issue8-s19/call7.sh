# Call 7 (nvidia-h100-x1, carry .devdata): call 5 saw one of the two graphed-step tests of train.py fail (not shown), call 6
# both pass. With the workspace only in StepGraph, the plain and graphed runs use different cuBLAS kernels. This tree's
# test (both runs under CUBLAS_WORKSPACE_CONFIG=:0:0) and a copy without that (as in call 5), twice each, in turn;
# then the DDP graphed-step tests once. Both variants passed twice; the test's change (SAME_CUBLAS) was then taken
# back, so that the test keeps running train.py's default, as users do. Call 5's failure was not seen again.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
sed -e "s/^SAME_CUBLAS = .*/SAME_CUBLAS = {}/" tests/test_train.py > tests/test_train_nosame.py
for r in 1 2; do for f in test_train test_train_nosame; do
  echo "== $f round $r"
  timeout 135 python -m pytest -q tests/$f.py -k "replayed_from_one_cuda_graph and not ddp" --tb=line 2>&1 | grep -v Warn | grep "Error\|assert\|passed\|failed" | cut -c1-300
done; done
rm tests/test_train_nosame.py
timeout 120 python -m pytest -q tests/test_train.py -k "ddp_step_replayed" --tb=line 2>&1 | tail -1
