# Call 7 (nvidia-h100-x1, carry .devdata): the final tree (the plan's method renamed run, docstrings): the CUDA tests of
# matmul and the loss once more.
export PYTHONUNBUFFERED=1
timeout 150 python -m pytest -q -n 4 tests/test_matmul.py tests/test_linear_cross_entropy.py > $OUT/tests.txt 2>&1; echo "tests rc=$?"; tail -2 $OUT/tests.txt
