# Call 2 (nvidia-h100-x1, carry .devdata): the whole test suite natively on CUDA at the session's HEAD (no test since
# 41552a2 has been run there whole), the slowest 25 listed.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 2>/dev/null
timeout 570 python -m pytest -q -rs --durations=25 tests/ > $OUT/tests_all.txt 2>&1; echo "tests rc=$?"
grep -E "passed|failed|error" $OUT/tests_all.txt | tail -3; grep -E "^(FAILED|ERROR)" $OUT/tests_all.txt | head -20
