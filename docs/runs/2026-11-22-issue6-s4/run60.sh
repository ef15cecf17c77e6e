#!/bin/bash
# issue 6, session 4, call 7: the gram kernel's X and Y by TMA (odd shapes padded to multiples of 8): CUDA tests,
# gram_tma.py (its "pointer loads" column is now kernels/newton_schulz.py's TMA kernel), bench's optimizer table three times
export PYTHONUNBUFFERED=1
timeout 150 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
timeout 100 python docs/runs/2026-11-22-issue6-s4/gram_tma.py > $OUT/gram_tma.txt 2>&1; grep -v "Warn\|warn" $OUT/gram_tma.txt | cut -c1-200
for i in 1 2 3; do timeout 150 python bench.py --optim > $OUT/bench_opt_$i.txt 2>&1; tail -5 $OUT/bench_opt_$i.txt | head -4; done
