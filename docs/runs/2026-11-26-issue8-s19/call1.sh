# Call 1 (nvidia-h100-x1, carry .devdata): why the eager check and bench.py's eager step disagree (eager_gap.py),
# then bench.py's eager pair and the graphed eager step on the same machine.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nproc; lscpu | grep -i "model name\|MHz" | head -3
timeout 280 python docs/runs/2026-11-26-issue8-s19/eager_gap.py 3 > $OUT/eager_gap.txt 2>&1; echo "eager_gap rc=$?"
grep -B1 -A4 "^medians" $OUT/eager_gap.txt
timeout 280 python bench.py --autocast_residual=True --bench_dir=/tmp/b --variants="baseline eager,kernels eager,kernels eager graphed" > $OUT/bench_eager.txt 2>&1
echo "bench rc=$?"; grep -A5 "^Training step" $OUT/bench_eager.txt | cut -c1-160; grep "the eager step" $OUT/bench_eager.txt
