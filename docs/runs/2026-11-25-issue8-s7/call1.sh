# Call 1 (nvidia-h100-x1, carry .devdata): the launch path's CUDA tests (last session's review fixes,
# not yet run on CUDA), then the eager step's host-time ablations (ablate.py).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
cd "$(git rev-parse --show-toplevel)"
timeout 150 python -m pytest -q tests/test_launch.py tests/test_choose.py > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
timeout 400 python docs/runs/2026-11-25-issue8-s7/ablate.py > $OUT/ablate.txt 2>&1
echo "[rc=$?]" >> $OUT/ablate.txt; grep -E "round|rc=|^  [a-z]" $OUT/ablate.txt | head -40
