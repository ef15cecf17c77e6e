#!/bin/bash
# issue 6, call 5: final code: CUDA tests, the optimizer's parts, bench's optimizer table twice
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
timeout 120 python .devdata/opt_parts.py > $OUT/opt_parts.txt 2>&1; grep -E "step:" $OUT/opt_parts.txt; grep -A14 "Name" $OUT/opt_parts.txt | cut -c1-62,150-190
for i in 1 2; do timeout 200 python bench.py --steps=False --ops=False --attention=False --linear_ce=False > $OUT/bench_opt_$i.txt 2>&1; tail -5 $OUT/bench_opt_$i.txt; done
