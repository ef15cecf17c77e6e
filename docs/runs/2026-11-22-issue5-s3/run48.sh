#!/bin/bash
# issue 5, session 3: the segment row kernel: alone (old vs new, configs), the op in three regimes, CUDA tests, bench
export PYTHONUNBUFFERED=1
pip install -q --no-deps .whl/liger_kernel-0.8.5-py3-none-any.whl 2>&1 | tail -1
python docs/runs/2026-11-22-issue5-s3/rowk3.py > $OUT/rowk3.txt 2>&1; echo "rowk3 rc $?"; cat $OUT/rowk3.txt
python docs/runs/2026-11-22-issue5-s3/regimes.py > $OUT/regimes2.txt 2>&1; echo "regimes rc $?"; grep -v Warn $OUT/regimes2.txt
timeout 300 python -m pytest -q tests/test_linear_cross_entropy.py > $OUT/tests_lce.txt 2>&1; echo "tests rc $?"; tail -3 $OUT/tests_lce.txt
