# Call 3 (nvidia-h100-x1, carry .devdata): call 2's cuBLAS without a workspace (-0.12 ms a step for kernels compiled
# graphed, three pairs) on what else it touches: the compiled baseline and the eager graphed step (bench.py), and issue
# 5's op alone, whose dx product uses split-K at 2048 rows (loss_op.py); the default and :0:0 in turn, twice for the op.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s15
for round in 1 2; do
  for ws in default none; do
    unset CUBLAS_WORKSPACE_CONFIG; [ $ws = none ] && export CUBLAS_WORKSPACE_CONFIG=:0:0
    echo "== op $ws $round"; timeout 60 python $R/loss_op.py
  done
done
for ws in default none; do
  unset CUBLAS_WORKSPACE_CONFIG; [ $ws = none ] && export CUBLAS_WORKSPACE_CONFIG=:0:0
  timeout 200 python bench.py --autocast_residual=True --variants="baseline compiled,kernels eager graphed,kernels compiled graphed" \
    --bench_dir=/tmp/b_$ws > /tmp/b_$ws.txt 2>&1
  echo "== bench $ws rc=$?"; grep -A4 "^Training step" /tmp/b_$ws.txt | tail -3 | cut -c1-75
done
