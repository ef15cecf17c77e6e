# Call 6 (nvidia-h100-x1, carry .devdata): after the review's fixes (compile_model's backend now subclasses torch's
# Inductor wrapper; Norm.linear asks kernels.norm.takes_triton). CUDA tests of what changed, and the kernels compiled
# graphed step with recompute 'none' and 'activation' (its memory should be calls 3b-4's: 5,568 and 4,075 MiB).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
for r in none activation; do
  timeout 110 python bench.py --autocast_residual=True --recompute=$r --variants="kernels compiled graphed" --bench_dir=$OUT/b_$r > $OUT/b_$r.txt 2>&1
  echo "== $r rc=$?"; grep -A3 "^Training step" $OUT/b_$r.txt | tail -2 | cut -c1-100
done
timeout 40 python -m pytest -q tests/test_norm.py -k output_again 2>&1 | tail -1
timeout 150 python -m pytest -q tests/test_model.py -k "recompute or cast_per_block or compile_model or kernel_choice" 2>&1 | grep -E "passed|failed|^E " | tail -4
timeout 80 python -m pytest -q tests/test_step_graph.py 2>&1 | grep -E "passed|failed|^E " | tail -3
timeout 130 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" 2>&1 | grep -E "passed|failed|^E " | tail -3
