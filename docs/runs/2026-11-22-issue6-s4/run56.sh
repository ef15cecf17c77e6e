#!/bin/bash
# issue 6, session 4, call 3: + the norm's sums of squares from the momentum kernel; the variants again, bench's optimizer table twice, CUDA tests
export PYTHONUNBUFFERED=1
timeout 280 python docs/runs/2026-11-22-issue6-s4/pairs_streams.py sumsq > $OUT/pairs_streams_sumsq.txt 2>&1; echo "rc $?"; grep -v "Warn\|warn" $OUT/pairs_streams_sumsq.txt | grep -v "^Muon lr" | head -40 | cut -c1-200
for i in 1 2; do timeout 150 python bench.py --optim > $OUT/bench_opt_$i.txt 2>&1; tail -5 $OUT/bench_opt_$i.txt | head -4; done
timeout 150 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
