# Call 2 (nvidia-h100-x1): host time per matmul with and without cuBLAS's workspace, and the eager steps under each,
# processes in turn (workspace_host.py).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for r in 1 2; do for m in default none; do
  timeout 140 python docs/runs/2026-11-26-issue8-s19/workspace_host.py $m 2>&1 | grep -v "^kernels:\|^number of\|^AdamW"
done; done
