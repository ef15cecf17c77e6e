#!/bin/bash
# issue 4, session 4, call 8: the CUDA tests call 7 did not reach, and the LLaMA table with rotary_qkv
# (its PyTorch reference now in the projection's own layout)
export PYTHONUNBUFFERED=1
KERNELS_AUTOTUNE=0 timeout 150 python -m pytest -q tests/test_rotary.py tests/test_model.py tests/test_choose.py \
  -k "not wandb and not openwebtext" > $OUT/tests_cuda.txt 2>&1; echo "tests rc $?"; tail -3 $OUT/tests_cuda.txt
timeout 290 python bench.py --arch=llama --n_kv_head=4 --bench_dir=/tmp/ba > $OUT/bench_llama_after.txt 2>&1; echo "after rc $?"
grep -v Warn $OUT/bench_llama_after.txt | grep "rotary:\|attention:" ; grep -v Warn $OUT/bench_llama_after.txt | tail -9
