# Call 1b (the same machine, right after call 1, which ran out of its 600 s before the 'activation' bench): that
# bench, then the two test lines whose summaries call 1's tail did not show. Its bench log: call1/bench_activation_rerun.txt.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 230 python bench.py --autocast_residual=True --recompute=activation --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" --bench_dir=$OUT/bench_activation > $OUT/bench_activation.txt 2>&1
echo "== bench activation rc=$?"; grep -A6 "^Training step" $OUT/bench_activation.txt | cut -c1-230
timeout 150 python -m pytest -q tests/test_norm.py 2>&1 | grep -E "passed|failed|error" | tail -3
timeout 180 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph" 2>&1 | grep -E "passed|failed|error" | tail -3
