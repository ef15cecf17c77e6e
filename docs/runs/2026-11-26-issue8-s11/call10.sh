# Eleventh session, call 10 (nvidia-h100-x1): PyTorch's cuBLASLt path for every matmul (TORCH_BLAS_PREFER_CUBLASLT=1)
# against its default cuBLAS path, in turn, twice. Prediction: within +-0.2 ms; -0.2 ms if the 48 memsets before
# cuBLAS's cooperative kernels go with another kernel choice at the same speed.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
V="baseline compiled,kernels compiled graphed"
run() {  # run <name> <env...>
  local name=$1; shift
  env "$@" timeout 140 python bench.py --autocast_residual=True --variants="$V" --bench_dir=/tmp/b_$name > $OUT/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|rror" $OUT/$name.txt | cut -c1-150
}
run cublas_1 TORCH_BLAS_PREFER_CUBLASLT=0
run cublaslt_1 TORCH_BLAS_PREFER_CUBLASLT=1
run cublas_2 TORCH_BLAS_PREFER_CUBLASLT=0
run cublaslt_2 TORCH_BLAS_PREFER_CUBLASLT=1
