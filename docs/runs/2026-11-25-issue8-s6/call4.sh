# device call 4 (nvidia-h100-x1): the CUDA tests call 3 did not reach (its 320 s ran out in test_gelu.py,
# all passing so far), the model's tests with them.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 540 python -m pytest -q tests/test_attention.py tests/test_linear_cross_entropy.py tests/test_model.py \
  tests/test_gelu.py tests/test_rotary.py tests/test_swiglu.py > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
tail -8 $OUT/tests.txt
