#!/bin/bash
# call 11: the new 'auto' (PyTorch LayerNorm and GELU) and the overrides: CUDA model tests, bench's step and optimizer tables
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python -m pytest -q tests/test_model.py -k "not wandb and not openwebtext" -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -12
timeout 400 python bench.py --ops=False --attention=False --linear_ce=False --json_out=$OUT/bench.json > $OUT/bench.txt 2>&1; grep -A6 "^Optimizer\|^Training step" $OUT/bench.txt | cut -c1-220
