# Call 6b (the same machine, right after call 6, whose two test lines ran out of their time limits): those lines
# with longer limits. Output (no $OUT files): "67 passed, 199 deselected in 60.86s" and "2 passed, 13 deselected in 137.10s".
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 150 python -m pytest -q tests/test_norm.py -k output_again 2>&1 | tail -1
timeout 220 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" 2>&1 | grep -E "passed|failed|^E " | tail -3
