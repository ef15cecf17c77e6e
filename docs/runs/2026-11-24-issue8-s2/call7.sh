# device call 7: the graphed step's CUDA tests again on the final code (call 1 ran them before the
# norms' out_dtype), with bench's and the user-error tests
export PYTHONUNBUFFERED=1 TINY_SHAKESPEARE=.devdata/input.txt
KERNELS_AUTOTUNE=0 timeout 560 python -m pytest -q -rs tests/test_step_graph.py tests/test_train.py \
  tests/test_bench.py -k "graph or user_errors" -p no:cacheprovider > $OUT/tests_cuda.txt 2>&1
echo "[rc=$?]" >> $OUT/tests_cuda.txt
