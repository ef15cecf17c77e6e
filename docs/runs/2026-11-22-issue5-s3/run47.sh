#!/bin/bash
# issue 5, session 3: timing regimes (power limit) and floors
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/clocks2.csv 2>&1 &
SMI=$!
python docs/runs/2026-11-22-issue5-s3/regimes.py > $OUT/regimes.txt 2>&1; echo "regimes rc $?"
kill $SMI
cat $OUT/regimes.txt | grep -v Warning
