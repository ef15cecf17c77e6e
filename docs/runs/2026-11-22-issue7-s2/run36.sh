#!/bin/bash
# issue 7, call 8: the chooser on loop time: its CUDA tests, then python bench.py (the four variants)
export PYTHONUNBUFFERED=1
timeout 100 python -m pytest -q tests/test_choose.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   |FAILED|passed|failed" $OUT/tests.txt | cut -c1-300 | head -8
/usr/bin/time -f "wall %e s" timeout 420 python bench.py --out_dir=$OUT/e2e > $OUT/bench.txt 2>&1; grep -vE "^number of|^AdamW lr" $OUT/bench.txt | grep -E "^  [a-z_]+: |^kernels:|ms/iter|variant|eager|compiled|agree|wall" | cut -c1-250
cp kernels_cache.json $OUT/
