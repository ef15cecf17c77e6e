# Call 7 (nvidia-h100-x1, carry .devdata): issue 5's op alone (loss_op.py) under cuBLAS's other process settings,
# since the workspace moved the step by 0.1-0.45 ms: the default, the cuBLASLt path (TORCH_BLAS_PREFER_CUBLASLT=1),
# and a larger cuBLAS workspace (64 MiB), in turn, twice.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s15
for round in 1 2; do
  for s in default lt big; do
    unset CUBLAS_WORKSPACE_CONFIG TORCH_BLAS_PREFER_CUBLASLT
    [ $s = lt ] && export TORCH_BLAS_PREFER_CUBLASLT=1
    [ $s = big ] && export CUBLAS_WORKSPACE_CONFIG=:65536:1
    echo "== op $s $round"; timeout 60 python $R/loss_op.py
  done
done
