# Call 2 (nvidia-h100-x1, carry .devdata): the two largest parts of 'activation''s extra time in call 1's profiles.
# (1) The loss's dx product at 2048-row chunks without cuBLAS's workspace (no split-K): split over the vocabulary as
# batched products, with and without the workspace. (2) GELU's backward with y written again, by tile.
# Then the CUDA tests call 1 did not print (test_norm), and test_model.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s17
CUBLAS_WORKSPACE_CONFIG=:0:0 CUBLASLT_WORKSPACE_SIZE=0 timeout 100 python $R/dx_split.py; echo "== dx_split no workspace rc=$?"
timeout 100 python $R/dx_split.py; echo "== dx_split default rc=$?"
timeout 100 python $R/gelu_tiles.py; echo "== gelu_tiles rc=$?"
timeout 170 python -m pytest -q -x tests/test_norm.py > $OUT/test_norm.txt 2>&1; echo "== test_norm rc=$?"; tail -3 $OUT/test_norm.txt
timeout 150 python -m pytest -q -x tests/test_model.py > $OUT/test_model.txt 2>&1; echo "== test_model rc=$?"; tail -3 $OUT/test_model.txt
