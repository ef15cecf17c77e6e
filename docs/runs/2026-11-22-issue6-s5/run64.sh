#!/bin/bash
# issue 6, session 5, call 1: the gram kernel with two blocks per program (gram_pairs.py), the Newton-Schulz and
# Muon CUDA tests, bench's optimizer table
export PYTHONUNBUFFERED=1
timeout 240 python docs/runs/2026-11-22-issue6-s5/gram_pairs.py > $OUT/gram_pairs.txt 2>&1; cat $OUT/gram_pairs.txt | cut -c1-400
timeout 200 python -m pytest -q tests/test_newton_schulz.py tests/test_muon.py tests/test_muon_update.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
timeout 150 python bench.py --optim > $OUT/bench_opt.txt 2>&1; tail -5 $OUT/bench_opt.txt | head -4
