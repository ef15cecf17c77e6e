# Tenth session, call 6 (nvidia-h100-x1, carry .devdata): a trace of the compiled graphed GPT-2 step (combo
# kernels), kept (gzip) to measure the idle time between kernels inside the graph.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python bench.py --autocast_residual=True --profile --profile_variant="kernels compiled graphed" --bench_dir=$OUT/prof > $OUT/prof.txt 2>&1
echo "rc=$?"; grep "ms per step" $OUT/prof.txt
ls -la $OUT/prof; gzip -9 $OUT/prof/trace.json; ls -la $OUT/prof
