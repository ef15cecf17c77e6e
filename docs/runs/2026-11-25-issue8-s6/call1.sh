# device call 1 (nvidia-h100-x1): the lean eager launch (kernels/backend.py). Host time per launch,
# the eager step with each op set and the launch on/off, a cProfile of the all-Triton eager step;
# then the kernel tests on CUDA (they launch through it in eager mode).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 330 python docs/runs/2026-11-25-issue8-s6/eager_host.py > $OUT/eager_host.txt 2>&1; echo "[rc=$?]" >> $OUT/eager_host.txt
grep -v "^\s*$" $OUT/eager_host.txt | head -30
timeout 220 python -m pytest -q -x tests/test_launch.py tests/test_backend_rule.py tests/test_norm.py tests/test_gelu.py \
  tests/test_linear_cross_entropy.py tests/test_attention.py > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
tail -4 $OUT/tests.txt
