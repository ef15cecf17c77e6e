#!/bin/bash
# issue 5, session 3: the row kernel beside the matmuls (streams, SM carveout); clocks logged
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv 2>&1 &
SMI=$!
python docs/runs/2026-11-22-issue5-s3/overlap.py > $OUT/overlap.txt 2>&1; echo "overlap rc $?"
kill $SMI
tail -40 $OUT/overlap.txt
