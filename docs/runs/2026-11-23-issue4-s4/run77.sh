#!/bin/bash
# issue 4, session 4, call 7: LLaMA's attention on the packed projection too (rotary_qkv): CUDA tests, then
# the LLaMA end-to-end table with this change and without it (.devdata/before: the previous commit's code)
export PYTHONUNBUFFERED=1
KERNELS_AUTOTUNE=0 timeout 200 python -m pytest -q tests/test_rotary.py tests/test_model.py tests/test_choose.py \
  tests/test_attention.py -k "not wandb and not openwebtext and (not test_attention or packed or fullgraph)" > $OUT/tests_cuda.txt 2>&1
echo "tests rc $?"; tail -3 $OUT/tests_cuda.txt
timeout 190 python bench.py --arch=llama --n_kv_head=4 --bench_dir=/tmp/ba > $OUT/bench_llama_after.txt 2>&1; echo "after rc $?"
grep -v Warn $OUT/bench_llama_after.txt | grep "rotary:\|attention:\|ms/iter\|baseline\|kernels " | tail -12
(cd .devdata/before && timeout 190 python bench.py --arch=llama --n_kv_head=4 --bench_dir=/tmp/bb > $OUT/bench_llama_before.txt 2>&1; echo "before rc $?")
grep -v Warn $OUT/bench_llama_before.txt | grep "rotary:\|attention:\|baseline\|kernels " | tail -10
