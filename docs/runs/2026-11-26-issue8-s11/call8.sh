# Eleventh session, call 8 (nvidia-h100-x1, carry .devdata): CUDA tests touched by the loss's chunk argument:
# Inductor's view of each kernel's writes, and train.py (gpt_args now carry loss_chunk_mib).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 120 python -m pytest -q tests/test_compile_writes.py > $OUT/tests_writes.txt 2>&1
echo "== writes rc=$?"; tail -2 $OUT/tests_writes.txt
timeout 420 python -m pytest -q tests/test_train.py > $OUT/tests_train.txt 2>&1
echo "== train rc=$?"; tail -4 $OUT/tests_train.txt
