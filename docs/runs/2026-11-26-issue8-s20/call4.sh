# Call 4 (nvidia-h100-x1, carry .devdata): 'auto''s eager check with the two models timed in turn (eager_in_turn.patch
# applied, with its tests; reverted after call 5): tests/test_choose.py on CUDA; the two protocols four times each
# (check_protocols.py); bench.py's eager pair with the new check.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 150 python -m pytest -q tests/test_choose.py 2>&1 | tail -2
timeout 300 python docs/runs/2026-11-26-issue8-s20/check_protocols.py > $OUT/check_protocols.txt 2>&1; echo "protocols rc=$?"
grep -v "^kernels:\|^number of" $OUT/check_protocols.txt | tail -12
timeout 200 python bench.py --autocast_residual=True --bench_dir=/tmp/e --variants="baseline eager,kernels eager" \
  > $OUT/bench_eager.txt 2>&1; echo "bench rc=$?"
grep -A4 "^Training step" $OUT/bench_eager.txt | cut -c1-200; grep "the eager step" $OUT/bench_eager.txt
