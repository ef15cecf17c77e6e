# Call 1 (nvidia-h100-x1, carry .devdata): recompute='activation' with the norms' outputs made again (LinearOfNorm).
# CUDA tests of what changed, then GPT-2 124M with recompute 'none' and 'activation' in turn (the same variants).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 200 python -m pytest -q -x tests/test_norm.py 2>&1 | tail -2
timeout 200 python -m pytest -q tests/test_model.py -k "recompute or cast_per_block or kernel_choice" 2>&1 | tail -2
timeout 120 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph" 2>&1 | tail -1
V="baseline compiled,kernels compiled graphed,kernels eager graphed"
for r in none activation; do
  timeout 200 python bench.py --autocast_residual=True --recompute=$r --variants="$V" --bench_dir=$OUT/bench_$r > $OUT/bench_$r.txt 2>&1
  echo "== bench $r rc=$?"; grep -E "ms/iter|^\[|recompute" $OUT/bench_$r.txt | cut -c1-150; grep -A6 "^Training step" $OUT/bench_$r.txt | cut -c1-230
done
