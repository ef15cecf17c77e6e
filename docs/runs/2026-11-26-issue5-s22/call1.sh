# Call 1 (nvidia-h100-x1, carry .devdata): the chunk loop's products arranged otherwise (products.py), with a clock
# log; then the CUDA tests not run since their last change (test_bench -k memory) and the op's own tests.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv &
timeout 300 python docs/runs/2026-11-26-issue5-s22/products.py 5 > $OUT/products.txt 2>&1; echo "products rc=$?"
kill %1; grep -v Warning $OUT/products.txt | cut -c1-200
timeout 120 python -m pytest -q tests/test_bench.py -k memory > $OUT/tests_memory.txt 2>&1; echo "memory tests rc=$?"; tail -2 $OUT/tests_memory.txt
timeout 200 python -m pytest -q tests/test_linear_cross_entropy.py > $OUT/tests_lce.txt 2>&1; echo "lce tests rc=$?"; tail -2 $OUT/tests_lce.txt
