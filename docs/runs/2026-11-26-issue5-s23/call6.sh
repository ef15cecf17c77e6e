# Call 6 (nvidia-h100-x1, carry .devdata): with the accuracy gate (an offered algorithm is timed only if it keeps the
# three-way rule on a sample of the output): the CUDA tests of matmul and the loss; issue 5's bench row.
export PYTHONUNBUFFERED=1
timeout 120 python -m pytest -q -n 4 tests/test_matmul.py tests/test_linear_cross_entropy.py > $OUT/tests.txt 2>&1; echo "tests rc=$?"; tail -2 $OUT/tests.txt
timeout 150 python bench.py --kernels --kernel_ops=cross_entropy --bench_dir=/tmp/b > $OUT/bench_ce.txt 2>&1; echo "bench rc=$?"
grep -E "^\[|fwdbwd" $OUT/bench_ce.txt | cut -c1-220
