#!/bin/bash
# issue 6, session 4, call 9: CUDA tests on the final HEAD (names only changed since call 7)
timeout 200 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
