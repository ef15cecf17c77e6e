# Call 9 (nvidia-h100-x1): the CUDA tests of the files the split order touches (the attention, Inductor's view of
# the kernels' writes, bench.py).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 400 python -m pytest -q tests/test_attention.py tests/test_compile_writes.py tests/test_bench.py > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; tail -3 $OUT/tests.txt
