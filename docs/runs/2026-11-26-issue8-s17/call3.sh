# Call 3 (nvidia-h100-x1, carry .devdata): GELU's backward tiles with and without y (gelu_tiles.py; call 2's try
# imported the function for the module), then tests/test_norm.py on CUDA with the time it needs.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s17
timeout 120 python $R/gelu_tiles.py; echo "== gelu_tiles rc=$?"
timeout 420 python -m pytest -q tests/test_norm.py > $OUT/test_norm.txt 2>&1; echo "== test_norm rc=$?"; tail -2 $OUT/test_norm.txt
