# call 1: the MLP's products in two orientations (orient_probe.py); matmul and gelu_mlp's CUDA tests (last session's
# matmul() change, untested on CUDA, and the OFFERED constant)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 300 python docs/runs/2026-11-27-issue8-s25/orient_probe.py > $OUT/probe.txt 2>&1; echo "probe rc $?" >> $OUT/probe.txt
timeout 240 python -m pytest -q -n 4 tests/test_matmul.py tests/test_gelu_mlp.py > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt; cat $OUT/gpu.txt $OUT/probe.txt
