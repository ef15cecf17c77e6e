#!/bin/bash
# issue 6, session 4, call 5: vectorized stores back in the gram kernel; TMA loads vs pointer loads; the Muon variants; bench's optimizer table twice
export PYTHONUNBUFFERED=1
timeout 200 python docs/runs/2026-11-22-issue6-s4/gram_tma.py > $OUT/gram_tma.txt 2>&1; echo "rc $?"; grep -v "Warn\|warn" $OUT/gram_tma.txt | cut -c1-400
timeout 280 python docs/runs/2026-11-22-issue6-s4/pairs_streams.py sumsq > $OUT/pairs_streams_sumsq.txt 2>&1; echo "rc $?"; grep -v "Warn\|warn" $OUT/pairs_streams_sumsq.txt | grep -v "^Muon lr" | head -14 | cut -c1-200
for i in 1 2; do timeout 150 python bench.py --optim > $OUT/bench_opt_$i.txt 2>&1; tail -5 $OUT/bench_opt_$i.txt | head -4; done
