# Ninth session, call 8 (nvidia-h100-x1, carry .devdata): the plain GELU / SwiGLU backward launchers no longer
# make an empty output tensor per call; the output-writing backward is its own op (gelu_bwd_with_y,
# swiglu_bwd_with_y) over one launcher body. CUDA tests of what changed, Inductor included.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 400 python -m pytest tests/test_gelu.py tests/test_swiglu.py tests/test_model.py tests/test_compile_writes.py -q \
  -k "gives_the_output or matches_reference or torch_compile or recompute or inductor" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -2 $OUT/tests.txt; grep ^FAILED $OUT/tests.txt | head
