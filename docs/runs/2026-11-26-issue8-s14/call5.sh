# Call 5 (nvidia-h100-x1, carry .devdata): the eager graphed step with TiedEmbedding against LateGradient (e2e6e7d,
# .devdata/late) and the tree before the session (ef8ea5f, .devdata/head), in turn, twice, on one machine (call 4 ran
# only the first and last, once: equal); the fixed scatter test; bench.py's six variants (the table); a profile.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 100 python -m pytest -q tests/test_model.py -k "scatter" > $OUT/tests_model.txt 2>&1
echo "== tests model rc=$?"; grep FAILED $OUT/tests_model.txt; tail -1 $OUT/tests_model.txt
for round in 1 2; do
  for run in tied late old; do
    d=.; [ $run = old ] && d=.devdata/head; [ $run = late ] && d=.devdata/late
    (cd $d && timeout 80 python bench.py --autocast_residual=True --variants="kernels eager graphed" --bench_dir=$OUT/eg_${run}$round > $OUT/eg_${run}$round.txt 2>&1)
    echo "== $run $round rc=$?"; grep -A2 "^Training step" $OUT/eg_${run}$round.txt | tail -1 | cut -c1-80
  done
done
timeout 240 python bench.py --autocast_residual=True --bench_dir=$OUT/bench > $OUT/bench.txt 2>&1
echo "== bench rc=$?"; grep -A8 "^Training step" $OUT/bench.txt | tail -6 | cut -c1-200
d=$OUT/prof_kernels_eager_graphed
timeout 70 python bench.py --autocast_residual=True --profile --profile_steps=5 --profile_variant="kernels eager graphed" --bench_dir=$d > $d.txt 2>&1
echo "== profile rc=$?"; rm -f $d/trace.json $d/bench.json; head -1 $d/profile.txt; grep -E "memcpy|indexFunc|Memcpy|index" $d/profile.txt | cut -c1-120
