# Call 6 (carry .devdata .whl): bench's CPU end-to-end test after its fix, and test_train.py whole, its tests spread
# over four workers (call 4 reached 10 of 17 in 420 s serially).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 540 python -m pytest -v -rfEs --tb=short --timeout=300 --durations=10 -n 4 --dist load -p no:benchmark \
  tests/test_bench.py::test_end_to_end_table_and_json tests/test_train.py > $OUT/tests_train.txt 2>&1; echo "train rc=$?"
grep -E "(FAILED|ERROR|SKIPPED)|passed|failed" $OUT/tests_train.txt | grep -v "PASSED" | cut -c1-250 | tail -30
