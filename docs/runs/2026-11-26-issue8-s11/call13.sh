# Eleventh session, call 13 (nvidia-h100-x1): the review's test changes on CUDA.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest -q tests/test_linear_cross_entropy.py tests/test_model.py -k "chunk" > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; tail -3 $OUT/tests.txt
