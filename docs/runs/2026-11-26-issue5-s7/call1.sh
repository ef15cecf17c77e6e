# Issue 5, seventh session, call 1 (nvidia-h100-x1, carry .devdata): the row kernel's walking order (row_order.py),
# with a clock log; then the CUDA test of train.py's one-line user errors (past the 420 s limit of the whole file before).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv &
# (ran with row_order.patch applied to kernels/linear_cross_entropy.py)
timeout 300 python docs/runs/2026-11-26-issue5-s7/row_order.py 3 > $OUT/row_order.txt 2>&1; echo "rc=$?"
kill %1; grep -v Warning $OUT/row_order.txt
# (the user errors test passed in the first try of this call: 1 passed in 116 s)
