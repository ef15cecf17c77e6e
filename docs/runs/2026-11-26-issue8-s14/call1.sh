# Call 1 (nvidia-h100-x1, carry .devdata): the head's gradient handed on after the embedding's sparse rows
# (model.LateGradient), so autograd adds the rows in place. CUDA tests of the embedding paths, then this tree and the
# one before it (git archive ef8ea5f in .devdata/head) in turn, twice, and a profile of kernels eager graphed.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 150 python -m pytest -q tests/test_model.py -k "sparse" > $OUT/tests_model.txt 2>&1
echo "== tests model rc=$?"; grep FAILED $OUT/tests_model.txt; tail -1 $OUT/tests_model.txt
timeout 90 python -m pytest -q tests/test_step_graph.py > $OUT/tests_graph.txt 2>&1
echo "== tests step graph rc=$?"; grep FAILED $OUT/tests_graph.txt; tail -1 $OUT/tests_graph.txt
V="baseline eager,kernels eager,kernels eager graphed"
for round in 1 2; do
  for run in new old; do
    d=.; [ $run = old ] && d=.devdata/head
    (cd $d && timeout 100 python bench.py --autocast_residual=True --variants="$V" --bench_dir=$OUT/bench_${run}$round > $OUT/bench_${run}$round.txt 2>&1)
    echo "== $run $round rc=$?"; grep -A4 "^Training step" $OUT/bench_${run}$round.txt | tail -3 | cut -c1-110
  done
done
d=$OUT/prof_kernels_eager_graphed
timeout 120 python bench.py --autocast_residual=True --profile --profile_steps=5 --profile_variant="kernels eager graphed" --bench_dir=$d > $d.txt 2>&1
echo "== profile rc=$?"; rm -f $d/trace.json; head -3 $d/profile.txt | cut -c1-150; grep -E "memcpy|indexFunc|Memcpy" $d/profile.txt | cut -c1-120
