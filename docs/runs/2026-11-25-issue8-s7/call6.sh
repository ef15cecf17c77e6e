# Call 6 (nvidia-h100-x1, same warm machine as calls 4-5, its kernels_cache.json kept): two more runs
# of the table's main variants, to see the spread.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for i in 2 3; do
  timeout 200 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager,baseline compiled,kernels compiled graphed" \
    --bench_dir=$OUT/bench_rep$i > $OUT/bench_rep$i.txt 2>&1; echo "[rc=$?]" >> $OUT/bench_rep$i.txt
  grep -E "^ *(baseline|kernels) (eager|compiled)|eager step|rc=" $OUT/bench_rep$i.txt | cut -c1-200
done
