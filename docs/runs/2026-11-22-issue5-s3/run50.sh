#!/bin/bash
export PYTHONUNBUFFERED=1
python docs/runs/2026-11-22-issue5-s3/rowk3.py > $OUT/rowk3b.txt 2>&1; echo "rowk3 rc $?"; cat $OUT/rowk3b.txt | tail -12
python docs/runs/2026-11-22-issue5-s3/regimes.py > $OUT/regimes3.txt 2>&1; echo "regimes rc $?"; grep -v Warn $OUT/regimes3.txt
