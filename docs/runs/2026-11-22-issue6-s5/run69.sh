#!/bin/bash
# issue 6, session 5, call 6 (final HEAD): the Newton-Schulz and Muon CUDA tests; bench's optimizer table three more times
export PYTHONUNBUFFERED=1
timeout 150 python -m pytest -q tests/test_newton_schulz.py tests/test_muon.py tests/test_muon_update.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
for i in 1 2 3; do timeout 140 python bench.py --optim > $OUT/bench_opt_$i.txt 2>&1; tail -5 $OUT/bench_opt_$i.txt | head -4; done
