# call 1: graph_ms ending a failed capture's hold on the CUDA generator, on CUDA: test_choose.py with this tree,
# then the new test against .devdata/head (e966b55, graph_ms as it was: expected to fail); then nanoGPT's erf GELU,
# the six variants (the table), at this tree
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 150 python -m pytest -q tests/test_choose.py > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt
cp tests/test_choose.py .devdata/head/tests/test_choose.py
(cd .devdata/head && timeout 60 python -m pytest -q tests/test_choose.py -k failed_capture) > $OUT/tests_head.txt 2>&1
echo "head tests rc $?" >> $OUT/tests_head.txt
tail -2 $OUT/tests.txt; grep -m2 "Offset\|passed\|failed" $OUT/tests_head.txt; tail -1 $OUT/tests_head.txt
echo "t=$(( $(date +%s) - t0 ))"
timeout 330 python bench.py --autocast_residual=True --bench_dir=/tmp/erf > $OUT/bench_erf.txt 2>&1
echo "bench rc $?"; grep -A8 "^ *variant" $OUT/bench_erf.txt; grep "losses agree" $OUT/bench_erf.txt
echo "t=$(( $(date +%s) - t0 ))"
