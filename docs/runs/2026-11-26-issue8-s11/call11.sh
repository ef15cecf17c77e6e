# Eleventh session, call 11 (nvidia-h100-x1): the model test of loss_chunk_mib on CUDA.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest -q tests/test_model.py -k "loss_chunk or forward_backward" > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; tail -3 $OUT/tests.txt
