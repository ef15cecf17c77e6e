# Call 2 (nvidia-h100-x1, carry .devdata): the loss's chunk products through kernels/matmul.py (cuBLASLt, each
# product's algorithm measured). CUDA tests of the new module and of the loss; then issue 5's bench row; then which
# algorithms cuBLASLt offers for the loss's problems at 16-byte against 256-byte alignment (the plans ask for 16).
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv &
timeout 240 python -m pytest -q -n 4 tests/test_matmul.py tests/test_linear_cross_entropy.py > $OUT/tests.txt 2>&1; echo "tests rc=$?"; tail -3 $OUT/tests.txt
timeout 200 python bench.py --kernels --kernel_ops=cross_entropy > $OUT/bench_ce.txt 2>&1; echo "bench rc=$?"
grep -v Warning $OUT/bench_ce.txt | tail -25 | cut -c1-200
timeout 60 python docs/runs/2026-11-26-issue5-s23/alignment.py > $OUT/alignment.txt 2>&1; echo "alignment rc=$?"; cat $OUT/alignment.txt | cut -c1-200
kill %1
