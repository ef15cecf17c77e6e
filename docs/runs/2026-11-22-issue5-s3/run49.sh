#!/bin/bash
export PYTHONUNBUFFERED=1
python docs/runs/2026-11-22-issue5-s3/rowk3.py > $OUT/rowk3.txt 2>&1; echo "rowk3 rc $?"; cat $OUT/rowk3.txt | tail -15
