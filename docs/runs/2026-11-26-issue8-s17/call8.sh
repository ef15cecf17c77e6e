# Call 8 (nvidia-h100-x1, carry .devdata): after the review, the memory rule applies to steps decided on GPU time and
# says so only where it overturns the time choice. Whether it overturns one in the real flow: bench.py's compiled
# graphed 'activation' step once (measuring, cached), the cached loss measurement tilted so that PyTorch's is faster
# on GPU time (tilt_cache.py), then the same step again. tests/test_choose.py on CUDA.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s17
rm -f kernels_cache.json
for run in measured tilted; do
  [ $run = tilted ] && python $R/tilt_cache.py kernels_cache.json
  timeout 150 python bench.py --autocast_residual=True --recompute=activation --variants="kernels compiled graphed" \
    --bench_dir=/tmp/$run > $OUT/bench_$run.txt 2>&1
  echo "== $run rc=$?"; grep -A2 "^Training step" $OUT/bench_$run.txt | tail -1 | cut -c1-120
  grep "cross_entropy: \|Triton for" $OUT/bench_$run.txt | cut -c1-260
done
timeout 90 python -m pytest -q tests/test_choose.py 2>&1 | tail -1
