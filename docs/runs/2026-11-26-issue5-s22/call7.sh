# Call 7 (nvidia-h100-x1, carry .devdata): bench's op table for the loss on the session's tree (no change to the op
# since the eleventh session), for issue 5's figures against torch.compile in the same run; with a clock log.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv &
timeout 300 python bench.py --kernels --kernel_ops=cross_entropy --bench_dir=/tmp/b_ce > $OUT/bench_ce.txt 2>&1; echo "bench_ce rc=$?"
kill %1; grep -E "^device|^\[|fwdbwd" $OUT/bench_ce.txt | cut -c1-220
