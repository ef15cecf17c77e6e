# device call 5 (nvidia-h100-x1): the tests natively on CUDA for what changed (model.py's
# autocast_residual: the bf16 training step test, both streams) and the norms it leans on
export PYTHONUNBUFFERED=1
timeout 400 python -m pytest -q -x tests/test_model.py tests/test_norm.py > $OUT/tests_cuda.txt 2>&1
echo "[rc=$?]" >> $OUT/tests_cuda.txt
tail -4 $OUT/tests_cuda.txt
