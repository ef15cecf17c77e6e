# call 3: why call 2's capture of the MLP case failed (capture_probe.py); bench's GPT-2 step with GELU's tanh form
# (the MLP case measured with bf16 weights), and with nanoGPT's erf form on the same machine
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 120 python docs/runs/2026-11-26-issue8-s24/capture_probe.py > $OUT/capture_probe.txt 2>&1; cat $OUT/capture_probe.txt
timeout 100 python -m pytest -q -n 4 tests/test_choose.py > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt; tail -2 $OUT/tests.txt
timeout 230 python bench.py --autocast_residual=True --gelu_approximate=tanh --bench_dir=$OUT/tanh \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_tanh.txt 2>&1; echo "rc $?" >> $OUT/bench_tanh.txt
grep -v "^\s*$" $OUT/bench_tanh.txt | tail -22
timeout 130 python bench.py --autocast_residual=True --bench_dir=$OUT/erf \
  --variants="baseline compiled,kernels compiled graphed" > $OUT/bench_erf.txt 2>&1; echo "rc $?" >> $OUT/bench_erf.txt
tail -9 $OUT/bench_erf.txt
