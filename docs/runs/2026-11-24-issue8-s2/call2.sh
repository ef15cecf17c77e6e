# device call 2: bench.py's end-to-end table with every variant, the graphed ones among them
export PYTHONUNBUFFERED=1
timeout 590 python bench.py --bench_dir=$OUT/bench --variants="baseline eager,kernels eager,baseline compiled,kernels compiled,baseline eager graphed,kernels eager graphed,baseline compiled graphed,kernels compiled graphed" > $OUT/bench.txt 2>&1
echo "[rc=$?]" >> $OUT/bench.txt
