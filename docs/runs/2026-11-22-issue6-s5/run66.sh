#!/bin/bash
# issue 6, session 5, call 3: persistent gram kernels (gram_persistent.py, gram_persist_bench.py)
export PYTHONUNBUFFERED=1
timeout 400 python docs/runs/2026-11-22-issue6-s5/gram_persist_bench.py > $OUT/gram_persist.txt 2>&1; grep -v Warning $OUT/gram_persist.txt | cut -c1-600 | tail -12
