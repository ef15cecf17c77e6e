#!/bin/bash
# issue 7, call 4: the norms' wide-row fix on CUDA; bench.py --kernels, every op
export PYTHONUNBUFFERED=1
timeout 150 python -m pytest -q tests/test_norm.py tests/test_bench.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   |FAILED|passed|failed" $OUT/tests.txt | cut -c1-300 | head -12
pip install -q --no-deps .whl/liger_kernel-0.8.5-py3-none-any.whl > /dev/null 2>&1
/usr/bin/time -f "wall %e s" timeout 430 python bench.py --kernels --out_dir=/tmp/ks > $OUT/kernels.txt 2>&1; grep -E "^\[|rror|wall|wrote" $OUT/kernels.txt | tail -12 | cut -c1-200
tar czf $OUT/ks.tgz -C /tmp ks
