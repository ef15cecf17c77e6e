# call 3: bench's profile of kernels compiled graphed, erf (nanoGPT's GELU, the default) and tanh, one machine: the in-step
# time of each kind of kernel, for the floors table
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for g in none tanh; do
  TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1 timeout 250 python bench.py --autocast_residual=True --gelu_approximate=$g --profile \
    --profile_variant="kernels compiled graphed" --variants="kernels compiled graphed" --bench_dir=$OUT/prof_$g > $OUT/prof_$g.txt 2>&1
  echo "rc $?" >> $OUT/prof_$g.txt; rm -f $OUT/prof_$g/trace.json
  grep -A45 "GPU busy" $OUT/prof_$g.txt | head -46
done
