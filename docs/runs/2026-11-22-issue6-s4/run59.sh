#!/bin/bash
# issue 6, session 4, call 6: final code (pairs, sums of squares from the momentum kernel, no stream per stack): CUDA tests, bench's optimizer table three times
export PYTHONUNBUFFERED=1
timeout 150 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
for i in 1 2 3; do timeout 150 python bench.py --optim > $OUT/bench_opt_$i.txt 2>&1; tail -5 $OUT/bench_opt_$i.txt | head -4; done
