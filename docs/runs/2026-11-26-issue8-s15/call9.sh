# Call 9 (nvidia-h100-x1, carry .devdata): call 8's test line filtered tests/test_choose.py out with -k; it alone.
export KERNELS_AUTOTUNE=0; timeout 300 python -m pytest -q tests/test_choose.py 2>&1 | tail -2 | tee $OUT/call9.log
