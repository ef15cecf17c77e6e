# call 2: call 1's change, a third pair in the other order (head first), then the tanh step's profile with it
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
for tree in head new; do
  dir=.; [ $tree = head ] && dir=.devdata/head
  (cd $dir && timeout 120 python bench.py --autocast_residual=True --gelu_approximate=tanh \
    --variants="kernels compiled graphed" --bench_dir=/tmp/b3$tree) > $OUT/bench_${tree}_3.txt 2>&1
  echo "$tree 3 rc $? $(grep -A1 '^ *variant' $OUT/bench_${tree}_3.txt | tail -1) t=$(( $(date +%s) - t0 ))"
done
timeout 150 python bench.py --autocast_residual=True --gelu_approximate=tanh --profile \
  --profile_variant="kernels compiled graphed" --variants="kernels compiled graphed" --bench_dir=/tmp/prof \
  > $OUT/prof.txt 2>&1
echo "prof rc $?"; grep -A32 "GPU busy" $OUT/prof.txt | head -33; echo "t=$(( $(date +%s) - t0 ))"
