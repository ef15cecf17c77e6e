# call 12: the scripts' tests on CUDA after this session's train.py/bench.py/model.py changes (the first run lacked TINY_SHAKESPEARE: 16 errors, 1 failure, all FileNotFoundError)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 420 python -m pytest -q -n 4 tests/test_train.py tests/test_bench.py tests/test_step_graph.py > $OUT/tests.txt 2>&1
echo "rc $?" >> $OUT/tests.txt
tail -6 $OUT/tests.txt
