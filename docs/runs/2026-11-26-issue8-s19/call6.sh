# Call 6 (nvidia-h100-x1, carry .devdata): call 5's graphed-step tests of train.py again, with their failures shown
# (call 5 kept only pytest's last line: 1 failed, 1 passed).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0; TINY_SHAKESPEARE=$PWD/.devdata/input.txt timeout 300 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" --tb=short 2>&1 | grep -v "^  warnings\|Warning" | tail -40 | cut -c1-400
