# Eleventh session, call 5 (nvidia-h100-x1, carry .devdata): CUDA tests of the model and bench with the loss's
# chunk argument, then bench's op table for the loss: the op's default 200 MiB chunk and the model's 400 MiB.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 330 python -m pytest -q tests/test_model.py tests/test_bench.py > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; tail -3 $OUT/tests.txt
timeout 240 python bench.py --kernels --kernel_ops=cross_entropy --bench_dir=/tmp/b_ce > $OUT/bench_ce.txt 2>&1
echo "== bench_ce rc=$?"; grep -E "12288x768|cross_entropy" $OUT/bench_ce.txt | head -40
