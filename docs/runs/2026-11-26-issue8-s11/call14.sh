# Eleventh session, call 14 (nvidia-h100-x1): after the final read of the change (one helper for the default chunk),
# the chunk and memory tests and the GELU / SwiGLU output-again tests on CUDA.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 250 python -m pytest -q tests/test_linear_cross_entropy.py tests/test_model.py tests/test_gelu.py tests/test_swiglu.py \
  -k "chunk or output_again" > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; tail -3 $OUT/tests.txt
