# Call 3 (nvidia-h100-x1, the machine of call 2, carry .devdata): the six-variant table with cast_per_block
# (the compiled and graphed variants trace CastMatrices), bf16 residual stream.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 540 python bench.py --autocast_residual=True --bench_dir=$OUT/bench_all > $OUT/bench_all.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_all.txt; grep -v "^number of\|^AdamW" $OUT/bench_all.txt | tail -16
