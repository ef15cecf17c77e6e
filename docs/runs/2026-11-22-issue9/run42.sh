#!/bin/bash
# issue 9: the CUDA tests of what changed
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
TINY_SHAKESPEARE=$PWD/.devdata/input.txt timeout 560 python -m pytest $(python -c "import xdist" 2>/dev/null && echo "-n 6 --dist loadfile") -q tests/test_reliability.py tests/test_choose.py tests/test_train.py tests/test_data.py -k "not wandb and not openwebtext" > $OUT/tests.txt 2>&1; echo "tests rc $?"
tail -5 $OUT/tests.txt
