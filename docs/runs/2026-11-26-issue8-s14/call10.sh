# Call 10 (nvidia-h100-x1, carry .devdata): call 9's 23.64 ms compiled graphed against call 5's 23.44, another machine:
# TiedEmbedding returning the weight itself (this tree) against weight.view_as(weight) (the tree before the review's
# fixes, .devdata/viewas), in turn, twice, one machine.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for round in 1 2; do
  for run in new viewas; do
    d=.; [ $run = viewas ] && d=.devdata/viewas
    (cd $d && timeout 100 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=$OUT/cg_${run}$round > $OUT/cg_${run}$round.txt 2>&1)
    echo "== $run $round rc=$?"; grep -A2 "^Training step" $OUT/cg_${run}$round.txt | tail -1 | cut -c1-80
  done
done
