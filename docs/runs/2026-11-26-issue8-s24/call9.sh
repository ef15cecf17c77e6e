# call 9: call 8's profile had the GPU busy 21.27 of 22.58 ms (94%; the fifteenth session's step: 98%): where the idle
# sits, by the fifteenth session's gaps.py on the trace of 5 profiled steps
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python bench.py --autocast_residual=True --gelu_approximate=tanh --profile --profile_steps=5 \
  --profile_variant="kernels compiled graphed" --bench_dir=$OUT/prof > $OUT/prof.txt 2>&1; echo "rc $?" >> $OUT/prof.txt
head -1 $OUT/prof/profile.txt
python docs/runs/2026-11-26-issue8-s15/gaps.py $OUT/prof/trace.json 5 > $OUT/gaps.txt 2>&1; cat $OUT/gaps.txt
rm -f $OUT/prof/trace.json
