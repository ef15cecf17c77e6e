# device call 8: call 7's two failures again after the fix (the tests' tiny run now turns off the
# config's cuda_graph), with the graphed-step tests
export PYTHONUNBUFFERED=1 TINY_SHAKESPEARE=.devdata/input.txt
KERNELS_AUTOTUNE=0 timeout 560 python -m pytest -q -rs tests/test_train.py -k "graph or user_errors" \
  -p no:cacheprovider > $OUT/tests_cuda.txt 2>&1
echo "[rc=$?]" >> $OUT/tests_cuda.txt
