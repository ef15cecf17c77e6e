#!/bin/bash
# issue 4, session 4, call 5: the eager attention call's host time (where it goes), and a second end-to-end table
export PYTHONUNBUFFERED=1
timeout 120 python docs/runs/2026-11-23-issue4-s4/host_time.py > $OUT/host_time.txt 2>&1; echo "host rc $?"; head -45 $OUT/host_time.txt
timeout 330 python bench.py --bench_dir=/tmp/be > $OUT/bench_e2e.txt 2>&1; echo "bench e2e rc $?"
cp /tmp/be/bench.json $OUT/bench_e2e.json 2>/dev/null
grep -v Warn $OUT/bench_e2e.txt | tail -9
