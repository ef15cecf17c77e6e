# Call 11 (nvidia-h100-x1, carry .devdata): after the review (perf-notes point 7): the CUDA tests of step_graph.py,
# kernels/choose.py and train.py's graphed steps; then the six GPT-2 variants on the final tree.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 150 python -m pytest -q tests/test_step_graph.py tests/test_choose.py 2>&1 | tail -2
TINY_SHAKESPEARE=$PWD/.devdata/input.txt timeout 200 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" --tb=short 2>&1 | grep -v Warn | tail -15 | cut -c1-300
timeout 330 python bench.py --autocast_residual=True --bench_dir=/tmp/n > $OUT/bench_six.txt 2>&1; echo "six rc=$?"
grep -A8 "^Training step" $OUT/bench_six.txt | cut -c1-260; grep "the eager step" $OUT/bench_six.txt
