# Call 2 (nvidia-h100-x1, carry .devdata): recompute='activation' without the block matrices' bf16 copies kept
# (Block.matrices casts nothing together with recompute; the Functions cast with Tensor.to). GPT-2 124M with
# recompute 'none' and 'activation' in turn, the tests that changed, and train.py's graphed test with its reason shown.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
V="baseline compiled,kernels compiled graphed,kernels eager graphed"
for r in activation none; do
  timeout 200 python bench.py --autocast_residual=True --recompute=$r --variants="$V" --bench_dir=$OUT/bench_$r > $OUT/bench_$r.txt 2>&1
  echo "== bench $r rc=$?"; grep -A6 "^Training step" $OUT/bench_$r.txt | cut -c1-230
done
timeout 150 python -m pytest -q tests/test_model.py -k "recompute or cast_per_block" 2>&1 | grep -E "passed|failed|^E " | tail -5
timeout 150 python -m pytest -q -x tests/test_train.py -k "replayed_from_one_cuda_graph" 2>&1 | grep -E "passed|failed|rror" | head -8
