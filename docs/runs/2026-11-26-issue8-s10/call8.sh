# Tenth session, call 8 (nvidia-h100-x2, carry .devdata): train.py under torchrun on 2 GPUs, compiled by
# compile_model (combo kernels), plain and as one CUDA graph: the DDP test.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
nvidia-smi -L
timeout 400 python -m pytest tests/test_train.py -q -rs -k "ddp_step_replayed and True" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
