#!/bin/bash
# issue 6, session 4, call 2: the experiment of call 1 (a script bug stopped it), with the SM clock and power logged
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 200 > $OUT/clocks.csv &
SMI=$!
timeout 400 python docs/runs/2026-11-22-issue6-s4/pairs_streams.py > $OUT/pairs_streams.txt 2>&1; echo "rc $?"; grep -v "Warn\|warn" $OUT/pairs_streams.txt | head -60 | cut -c1-220
kill $SMI
