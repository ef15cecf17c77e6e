# Call 5 (nvidia-h100-x1, carry .devdata): the whole six-variant table with this session's norm
# launchers (the compiled and graphed variants trace the changed ops), bf16 residual stream.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 480 python bench.py --autocast_residual=True --bench_dir=$OUT/bench_all > $OUT/bench_all.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_all.txt; grep -v "^number of\|^AdamW" $OUT/bench_all.txt | tail -16
