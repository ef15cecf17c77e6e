# Calls 8-10 (nvidia-h100-x1, carry .devdata): eager_host.py, the eager step's host time with the workspace only in StepGraph.
# Calls 8 and 9 stopped at an ImportError (eager_gap.py imports 3a9efe8's model.cublas_without_workspace; then the
# repository root was missing from sys.path); call 10 ran it.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0; timeout 280 python docs/runs/2026-11-26-issue8-s19/eager_host.py > $OUT/eager_host.txt 2>&1; echo rc=$?; grep "round\|median" $OUT/eager_host.txt
