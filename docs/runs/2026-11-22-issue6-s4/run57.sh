#!/bin/bash
# issue 6, session 4, call 4: the gram kernel with TMA loads; a fused last product + weight update vs bmm + update
export PYTHONUNBUFFERED=1
timeout 300 python docs/runs/2026-11-22-issue6-s4/gram_tma.py > $OUT/gram_tma.txt 2>&1; echo "rc $?"; grep -v "Warn\|warn" $OUT/gram_tma.txt | cut -c1-600
