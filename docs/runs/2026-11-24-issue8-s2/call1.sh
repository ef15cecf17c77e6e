# device call 1 (issue 8, second session): the whole training step as one CUDA graph (step_graph.py)
# on CUDA: its tests, train.py's (graphed, and reduce-overhead with the eval marked per batch), bench's
# refusal of reduce-overhead in a graphed step
export PYTHONUNBUFFERED=1 TINY_SHAKESPEARE=.devdata/input.txt
KERNELS_AUTOTUNE=0 timeout 560 python -m pytest -q -rs --durations=8 tests/test_step_graph.py tests/test_train.py \
  tests/test_bench.py -k "graph or user_errors" > $OUT/tests_cuda.txt 2>&1
echo "[rc=$?]" >> $OUT/tests_cuda.txt
