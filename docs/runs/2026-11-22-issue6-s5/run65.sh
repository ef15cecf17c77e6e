#!/bin/bash
# issue 6, session 5, call 2: the 768^3 products warm and cold, Newton-Schulz in sub-stacks, PDL (gram_split.py)
export PYTHONUNBUFFERED=1
timeout 500 python docs/runs/2026-11-22-issue6-s5/gram_split.py > $OUT/gram_split.txt 2>&1; grep -v Warning $OUT/gram_split.txt | cut -c1-300 | tail -30
