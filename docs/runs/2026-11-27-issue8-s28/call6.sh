# call 6: after the review's mends, the copies' tests on CUDA (test_model's now changes the copies and checks the loss
# follows them; none under any recompute) and test_adamw's
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 150 python -m pytest -q tests/test_model.py tests/test_adamw.py -k "copies" > $OUT/tests.txt 2>&1
echo "tests rc $?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
