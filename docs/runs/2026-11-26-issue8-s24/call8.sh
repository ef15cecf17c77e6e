# call 8: where the tanh step's time goes now: bench's profile of kernels compiled graphed (per-kernel GPU time)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python bench.py --autocast_residual=True --gelu_approximate=tanh --profile \
  --profile_variant="kernels compiled graphed" --bench_dir=$OUT/prof > $OUT/prof.txt 2>&1; echo "rc $?" >> $OUT/prof.txt
rm -f $OUT/prof/trace.json
tail -45 $OUT/prof.txt
