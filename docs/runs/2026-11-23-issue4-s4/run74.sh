#!/bin/bash
# issue 4, session 4, call 4: the CUDA tests the last call did not reach (model, kernel choice), then
# the end-to-end table (GPT-2 124M, the four variants, 'auto' measured afresh)
export PYTHONUNBUFFERED=1
KERNELS_AUTOTUNE=0 timeout 200 python -m pytest -q tests/test_model.py tests/test_choose.py \
  -k "not wandb and not openwebtext" > $OUT/tests_cuda.txt 2>&1; echo "tests rc $?"; tail -3 $OUT/tests_cuda.txt
timeout 330 python bench.py --bench_dir=/tmp/be > $OUT/bench_e2e.txt 2>&1; echo "bench e2e rc $?"
cp /tmp/be/bench.json $OUT/bench_e2e.json 2>/dev/null
grep -v Warn $OUT/bench_e2e.txt | tail -22
