# call 5: the graphed step's profile with the copies (where the weights' casts went), and test_model and test_step_graph
# whole on CUDA with this session's tree
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 130 python bench.py --autocast_residual=True --profile --profile_variant="kernels compiled graphed" \
  --variants="kernels compiled graphed" --bench_dir=$OUT/prof > $OUT/prof.txt 2>&1
echo "rc $?" >> $OUT/prof.txt; rm -f $OUT/prof/trace.json; grep -A45 "GPU busy" $OUT/prof.txt | head -46; echo "t=$(( $(date +%s) - t0 ))"
timeout 280 python -m pytest -q tests/test_model.py tests/test_step_graph.py > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
