# call 4: the six variants on this session's final tree (the LM head's copy), for the README's table; then two more
# pairs of kernels compiled graphed in turn with .devdata/head (1bef3c7, no head copy): call 1's two pairs differed by
# +0.02 ms, inside their spread
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 220 python bench.py --autocast_residual=True --bench_dir=/tmp/full > $OUT/bench.txt 2>&1; echo "rc $?" >> $OUT/bench.txt
echo "t=$(( $(date +%s) - t0 ))"; tail -16 $OUT/bench.txt
for r in 3 4; do
  for tree in new head; do
    dir=.; [ $tree = head ] && dir=.devdata/head
    (cd $dir && timeout 75 python bench.py --autocast_residual=True --variants="kernels compiled graphed" \
      --bench_dir=/tmp/b$r$tree) > $OUT/bench_${tree}_$r.txt 2>&1
    echo "$tree $r rc $? $(grep -A1 '^ *variant' $OUT/bench_${tree}_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  done
done
