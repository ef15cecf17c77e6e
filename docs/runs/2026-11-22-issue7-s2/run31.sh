#!/bin/bash
# issue 7, call 1: CUDA tests of the changed parts; python bench.py with no arguments (the four variants)
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 170 python -m pytest -q tests/test_choose.py tests/test_bench.py -k "not wandb and not openwebtext" -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   |FAILED|passed|failed" $OUT/tests.txt | cut -c1-600 | head -12
/usr/bin/time -f "wall %e s" timeout 400 python bench.py --out_dir=$OUT/e2e > $OUT/bench.txt 2>&1; grep -vE "^number of|^AdamW lr" $OUT/bench.txt | tail -45 | cut -c1-250
cp kernels_cache.json $OUT/ 2>/dev/null
