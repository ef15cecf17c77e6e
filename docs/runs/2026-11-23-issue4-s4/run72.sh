#!/bin/bash
# issue 4, session 4, call 2: the packed-qkv attention on the H100: CUDA tests, the op at GPT-2's shape
# (packed and not), the compiled step's profile with 'auto' measured afresh
export PYTHONUNBUFFERED=1
KERNELS_AUTOTUNE=0 timeout 240 python -m pytest -q -x tests/test_attention.py tests/test_model.py tests/test_choose.py \
  -k "not wandb and not openwebtext" > $OUT/tests_cuda.txt 2>&1; echo "tests rc $?"; tail -3 $OUT/tests_cuda.txt
timeout 150 python bench.py --kernels --kernel_ops="attention qkv" --bench_dir=/tmp/bk > $OUT/bench_attention_qkv.txt 2>&1; echo "bench qkv rc $?"
grep -v Warn $OUT/bench_attention_qkv.txt | grep -i "attention\|impl" | head -20
timeout 200 python bench.py --profile --bench_dir=/tmp/p > $OUT/profile_run.txt 2>&1; echo "profile rc $?"
cp /tmp/p/profile.txt $OUT/profile_kernels.txt
grep "kernels\|attention\|cross_entropy" $OUT/profile_run.txt | head -8
head -30 $OUT/profile_kernels.txt
