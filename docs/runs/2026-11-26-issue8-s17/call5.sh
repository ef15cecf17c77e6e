# Call 5 (nvidia-h100-x1, carry .devdata): the 'activation' table with GELU's new backward tile (as the sixteenth
# session's call 4: the compiled baseline, then the two graphed kernels variants); kernels compiled graphed alone,
# whose peak in call 4 (4,987 MiB) was far above the sixteenth session's 4,075, with its whole log; train.py's
# graphed-step tests on CUDA (the refactor of kernels/norm.py was CPU-only).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python bench.py --autocast_residual=True --recompute=activation \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" --bench_dir=/tmp/a > $OUT/bench_activation.txt 2>&1
echo "== bench activation rc=$?"; grep -A5 "^Training step" $OUT/bench_activation.txt | tail -4 | cut -c1-200
timeout 130 python bench.py --autocast_residual=True --recompute=activation --variants="kernels compiled graphed" \
  --bench_dir=/tmp/s > $OUT/single.txt 2>&1
echo "== single rc=$?"; grep -A3 "^Training step" $OUT/single.txt | tail -2 | cut -c1-200
TINY_SHAKESPEARE=$PWD/.devdata/input.txt timeout 230 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" 2>&1 | tail -1
