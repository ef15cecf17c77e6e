#!/bin/bash
# issue 6, session 5, call 5: the hard-spectra tests on CUDA; bench's optimizer table three times (3 + 2 groups)
export PYTHONUNBUFFERED=1
timeout 120 python -m pytest -q tests/test_newton_schulz.py -k "hard or grouped" -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
for i in 1 2 3; do timeout 150 python bench.py --optim > $OUT/bench_opt_$i.txt 2>&1; tail -5 $OUT/bench_opt_$i.txt | head -4; done
