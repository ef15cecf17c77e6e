#!/bin/bash
# issue 5, session 3, final: CUDA tests, bench's cross-entropy table (with Liger), the end-to-end table
export PYTHONUNBUFFERED=1
pip install -q --no-deps .whl/liger_kernel-0.8.5-py3-none-any.whl > /dev/null 2>&1
timeout 300 python -m pytest -q tests/test_linear_cross_entropy.py tests/test_model.py -k "not wandb and not openwebtext" > $OUT/tests_cuda.txt 2>&1; echo "tests rc $?"; tail -2 $OUT/tests_cuda.txt
timeout 280 python bench.py --kernels --kernel_ops=cross_entropy --bench_dir=/tmp/bk > $OUT/bench_ce.txt 2>&1; echo "bench ce rc $?"
cp /tmp/bk/kernels.csv $OUT/kernels_ce.csv 2>/dev/null
grep -v Warn $OUT/bench_ce.txt | grep -i "cross_entropy\|impl\|---" | head -40
timeout 300 python bench.py --bench_dir=/tmp/be > $OUT/bench_e2e.txt 2>&1; echo "bench e2e rc $?"
cp /tmp/be/bench.json $OUT/bench_e2e.json 2>/dev/null
tail -16 $OUT/bench_e2e.txt
