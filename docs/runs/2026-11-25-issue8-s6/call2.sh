# device call 2 (nvidia-h100-x1): host time per op (PyTorch, ours with Triton's launch, lean, no launch),
# the eager step's op sets interleaved; the launch tests again (call 1's autotuner test compared with
# 3x + 2 computed by torch, one rounding off the kernel's fused multiply-add).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python docs/runs/2026-11-25-issue8-s6/host_ops.py > $OUT/host_ops.txt 2>&1; echo "[rc=$?]" >> $OUT/host_ops.txt
grep -v "^kernels:\|^number of\|^AdamW" $OUT/host_ops.txt
timeout 200 python -m pytest -q -x tests/test_launch.py tests/test_backend_rule.py tests/test_norm.py tests/test_gelu.py \
  tests/test_linear_cross_entropy.py tests/test_attention.py > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
tail -4 $OUT/tests.txt
