#!/bin/bash
export PYTHONUNBUFFERED=1
python docs/runs/2026-11-22-issue5-s3/rowk3.py "[(8192, 256, 32), (8192, 128, 32), (4096, 128, 32), (8192, 256, 16), (4096, 256, 16)]" > $OUT/rowk3c.txt 2>&1; echo "rowk3 rc $?"; cat $OUT/rowk3c.txt | tail -14
