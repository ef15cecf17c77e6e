# call 7: call 6's one failure (the wrong-aux test's corruption, 1%, was within the rule's allowance for bf16): matmul's tests again
export PYTHONUNBUFFERED=1
timeout 200 python -m pytest -q -n 4 tests/test_matmul.py > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt
