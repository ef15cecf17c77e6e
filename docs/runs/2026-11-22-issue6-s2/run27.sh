#!/bin/bash
# issue 6, call 10: the normalisation folded into the first step's products: CUDA tests, bench's optimizer table twice, NS alone
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
for i in 1 2; do timeout 200 python bench.py --steps=False --ops=False --attention=False --linear_ce=False > $OUT/bench_opt_$i.txt 2>&1; tail -4 $OUT/bench_opt_$i.txt; done
timeout 100 python docs/runs/2026-11-22-issue6/ns_bench.py > $OUT/ns_bench.txt 2>&1; grep -v Warn $OUT/ns_bench.txt
