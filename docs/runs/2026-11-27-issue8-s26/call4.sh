# call 4: kernels.adamw (new) - its time against torch's fused AdamW on GPT-2's tensors with a sweep of its tiles;
# its CUDA tests and the optimizers' that use it; the graphed step (erf, the default) with it against the tree before
# (.devdata/head = git archive HEAD), in turn, twice
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
D=docs/runs/2026-11-27-issue8-s26
timeout 150 python $D/adamw_probe.py > $OUT/adamw_probe.txt 2>&1; echo "rc $?" >> $OUT/adamw_probe.txt; cat $OUT/adamw_probe.txt
timeout 200 python -m pytest -q tests/test_adamw.py tests/test_muon.py tests/test_step_graph.py > $OUT/tests.txt 2>&1
echo "tests rc $?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
for round in 1 2; do
  timeout 150 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/new$round > $OUT/bench_new_$round.txt 2>&1
  echo "new $round rc $? $(grep -A1 '^ *variant' $OUT/bench_new_$round.txt | tail -1)"
  (cd .devdata/head && timeout 150 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/old$round > $OUT/bench_old_$round.txt 2>&1
   echo "old $round rc $? $(grep -A1 '^ *variant' $OUT/bench_old_$round.txt | tail -1)")
done | tee $OUT/summary.txt
