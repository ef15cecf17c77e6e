# Call 12 (nvidia-h100-x1, carry .devdata): train.py's logged time per iteration. It was one iteration's host time,
# read before the log's host sync: with the step replayed from a CUDA graph and log_interval=10 (config/train_gpt2.py),
# call 11 logged 0.61 ms and 1752% MFU for a ~24 ms step. Now the mean since the last log, after its sync, evals left
# out. The new CUDA test with train.py as it was (expected to fail), then as it is, and the graphed-step tests.
# train_before.py, the call's copy of train.py as it was, is `git show 77e3974:train.py` (removed after the call).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
R=docs/runs/2026-11-26-issue8-s17
cp train.py /tmp/train_new.py && cp $R/train_before.py train.py
timeout 150 python -m pytest -q tests/test_train.py -k "is_the_steps" 2>&1 | grep -E "^E .*Assertion|passed|failed" | head -3
cp /tmp/train_new.py train.py
timeout 150 python -m pytest -q tests/test_train.py -k "logged_time" 2>&1 | tail -1
timeout 220 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" 2>&1 | tail -1
