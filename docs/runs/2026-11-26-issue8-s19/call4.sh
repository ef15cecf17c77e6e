# Call 4 (nvidia-h100-x1, carry .devdata): the workspace moved from the process to StepGraph's recording.
# CUDA tests of step_graph.py; then on one machine, in turn: this tree's six GPT-2 variants, the tree before
# (.devdata/head = 3a9efe8) on the three variants launched from Python, and this tree's three again.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 120 python -m pytest -q tests/test_step_graph.py 2>&1 | tail -2
B="python bench.py --autocast_residual=True"
timeout 330 $B --bench_dir=/tmp/n1 > $OUT/bench_new_six.txt 2>&1; echo "new six rc=$?"
grep -A8 "^Training step" $OUT/bench_new_six.txt | cut -c1-175; grep "the eager step" $OUT/bench_new_six.txt
V="baseline eager,kernels eager,kernels compiled"
(cd .devdata/head && timeout 200 $B --bench_dir=/tmp/h1 --variants="$V") > $OUT/bench_head_3.txt 2>&1; echo "head rc=$?"
grep -A4 "^Training step" $OUT/bench_head_3.txt | cut -c1-175
timeout 200 $B --bench_dir=/tmp/n2 --variants="$V" > $OUT/bench_new_3.txt 2>&1; echo "new rc=$?"
grep -A4 "^Training step" $OUT/bench_new_3.txt | cut -c1-175
