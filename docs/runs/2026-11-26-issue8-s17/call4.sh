# Call 4 (nvidia-h100-x1, carry .devdata): GELU's backward tile (4, 512, 2) -> (4, 512, 4) in the step with
# recompute='activation' (kernels compiled graphed, the new tile and the old in turn, twice), and test_gelu on CUDA.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s17
for round in 1 2; do
  for tile in "4 512 4" "4 512 2"; do
    timeout 130 python $R/tile_bench.py $tile --autocast_residual=True --recompute=activation \
      --variants="kernels compiled graphed" --bench_dir=/tmp/t > /tmp/t.txt 2>&1
    echo "== tile $tile round $round rc=$?"; grep -A2 "^Training step" /tmp/t.txt | tail -1 | cut -c1-150
  done
done
timeout 150 python -m pytest -q tests/test_gelu.py 2>&1 | tail -1
