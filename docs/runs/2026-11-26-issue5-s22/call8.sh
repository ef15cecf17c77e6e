# Call 8 (nvidia-h100-x1, carry .devdata): issue 8's six GPT-2 variants on the session's tree (no training-path change
# since the nineteenth session's call 11), for the closing note's figures on this session's machine.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 400 python bench.py --autocast_residual=True --bench_dir=/tmp/n > $OUT/bench_six.txt 2>&1; echo "six rc=$?"
grep -A8 "^Training step" $OUT/bench_six.txt | cut -c1-260; grep "the eager step\|losses" $OUT/bench_six.txt | cut -c1-260
