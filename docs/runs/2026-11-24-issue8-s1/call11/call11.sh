# device call 11: the GELU kernels with the store's address made without pointers (Inductor no
# longer takes x for written): tests on CUDA, the compiled op's kernels again, and bench.py
export TINY_SHAKESPEARE=.devdata/input.txt
KERNELS_AUTOTUNE=0 timeout 200 python -m pytest -q tests/test_gelu.py tests/test_compile_writes.py > $OUT/tests_cuda.txt 2>&1
echo "[rc=$?]" >> $OUT/tests_cuda.txt
timeout 120 python -u docs/runs/2026-11-24-issue8-s1/compiled_op_kernels.py > $OUT/compiled_op_kernels.txt 2>&1
timeout 330 python bench.py --bench_dir=$OUT/bench > $OUT/bench.txt 2>&1
echo "[rc=$?]" >> $OUT/bench.txt
