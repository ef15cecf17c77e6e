#!/bin/bash
# issue 4, session 4, call 3: after the fix (dk and dv through one pointer): CUDA tests, the kernels a compiled
# packed call launches, the compiled step's profile with 'auto' measured afresh
export PYTHONUNBUFFERED=1
KERNELS_AUTOTUNE=0 timeout 330 python -m pytest -q tests/test_attention.py tests/test_model.py tests/test_choose.py \
  -k "not wandb and not openwebtext" > $OUT/tests_cuda.txt 2>&1; echo "tests rc $?"; tail -3 $OUT/tests_cuda.txt
timeout 100 python docs/runs/2026-11-23-issue4-s4/compiled_kernels.py 2>&1 | grep -v Warn | tee $OUT/compiled_kernels.txt
timeout 150 python bench.py --profile --bench_dir=/tmp/p > $OUT/profile_run.txt 2>&1; echo "profile rc $?"
cp /tmp/p/profile.txt $OUT/profile_kernels.txt
grep "kernels\|attention\|cross_entropy\|cat_clone" $OUT/profile_run.txt | head -10
