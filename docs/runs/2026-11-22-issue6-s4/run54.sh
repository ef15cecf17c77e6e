#!/bin/bash
# issue 6, session 4, call 1: paired Newton-Schulz steps and a stream per stack (each on/off), CUDA tests, bench's optimizer table
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 280 python docs/runs/2026-11-22-issue6-s4/pairs_streams.py > $OUT/pairs_streams.txt 2>&1; echo "rc $?"; grep -v "Warn\|warn" $OUT/pairs_streams.txt | head -60 | cut -c1-220
timeout 150 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
timeout 150 python bench.py --optim > $OUT/bench_opt.txt 2>&1; tail -5 $OUT/bench_opt.txt
