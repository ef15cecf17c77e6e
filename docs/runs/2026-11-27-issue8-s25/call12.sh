# call 12: CUDA tests after the review's changes (the 'auto' rule's conditions, compile with 'activation' and tanh)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python -m pytest -q -n 4 tests/test_choose.py tests/test_gelu_mlp.py \
  tests/test_model.py -k "not nothing" > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt; nvidia-smi --query-gpu=name --format=csv,noheader
