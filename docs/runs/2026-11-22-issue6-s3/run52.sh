#!/bin/bash
# issue 6, session 3: Muon's memory-bound parts beside Newton-Schulz (streams)
export PYTHONUNBUFFERED=1
python docs/runs/2026-11-22-issue6-s3/overlap_step.py > $OUT/overlap_step.txt 2>&1; echo "rc $?"; grep -v "Warn\|warn" $OUT/overlap_step.txt | tail -12
