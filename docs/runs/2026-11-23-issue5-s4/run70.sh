#!/bin/bash
# issue 5, session 4, call 1: Triton dW against cuBLAS's fp32 beta-1 addmm; the whole op with each
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv &
timeout 500 python docs/runs/2026-11-23-issue5-s4/dw_exp.py 2>&1 | tee $OUT/dw_exp.txt | grep -v Warn
timeout 100 python docs/runs/2026-11-23-issue5-s4/row_exp.py 2>&1 | tee $OUT/row_exp.txt | grep -v Warn
kill %1
