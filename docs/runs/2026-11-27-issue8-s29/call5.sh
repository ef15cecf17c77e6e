# call 5: call 2's tanh table had kernels compiled (launched from Python, not graphed) at 28.04 ms, above the compiled
# baseline's 27.86, where the erf step's is 24.36 (call 4). Is gelu_mlp (cuBLASLt through ctypes, each product a
# Python call) its host time? The same variant with the MLP's kernel (gelu_mlp) and with PyTorch's MLP
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
for mlp in True False; do
  timeout 95 python bench.py --autocast_residual=True --gelu_approximate=tanh --variants="kernels compiled" \
    --use_triton_mlp=$mlp --bench_dir=/tmp/m$mlp > $OUT/bench_mlp_$mlp.txt 2>&1
  echo "mlp $mlp rc $? $(grep -A1 '^ *variant' $OUT/bench_mlp_$mlp.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  grep "Triton for" $OUT/bench_mlp_$mlp.txt
done
