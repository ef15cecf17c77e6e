# Session 8, call 1: the previous session's next.sh as written (GPT-2 eager pair x2, then weight_casts.py).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for i in 1 2; do
  timeout 130 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" > $OUT/bench_eager_$i.txt 2>&1
  echo "run $i: $(grep -E '^ *(baseline|kernels) eager +[0-9]' $OUT/bench_eager_$i.txt | cut -c1-120 | tr '\n' '|')"
done
# then the weight-cast prototype (docs/perf-notes.md, the end of the section "The eager step's host
# time, second pass"): autocast's per-use casts against one cast per block, and the bf16 bound
timeout 240 python docs/runs/2026-11-25-issue8-s7/weight_casts.py > $OUT/weight_casts.txt 2>&1
echo "[rc=$?]" >> $OUT/weight_casts.txt; grep -E "check|round|rc=" $OUT/weight_casts.txt
