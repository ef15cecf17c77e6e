# Eleventh session, call 6 (nvidia-h100-x1, carry .devdata): the loss's default chunk now holds at least 2048 rows
# (V = 131072 had 800). CUDA tests of the op, then bench's op table for the loss.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest -q tests/test_linear_cross_entropy.py tests/test_choose.py > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; tail -3 $OUT/tests.txt
timeout 240 python bench.py --kernels --kernel_ops=cross_entropy --bench_dir=/tmp/b_ce > $OUT/bench_ce.txt 2>&1
echo "== bench_ce rc=$?"; grep -E "^\[|fwdbwd" $OUT/bench_ce.txt | head -40
