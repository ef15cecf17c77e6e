# Call 3 (nvidia-h100-x1, carry .devdata): compiled, Inductor's partitioner keeps the block matrices' bf16 casts
# for the backward (a CPU probe with the min-cut partitioner: every block matrix saved in bf16, 'none' and
# 'activation' alike) unless ban_recompute_materialized_backward=False. GPT-2 124M, the compiled variants with
# the default, then the kernels variant with the flag off (activation, none).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
D=docs/runs/2026-11-26-issue8-s16
timeout 170 python bench.py --autocast_residual=True --recompute=activation --variants="baseline compiled,kernels compiled graphed" \
  --bench_dir=$OUT/b_default > $OUT/b_default.txt 2>&1
echo "== default activation rc=$?"; grep -A4 "^Training step" $OUT/b_default.txt | tail -2 | cut -c1-110
for r in activation none; do
  timeout 130 python $D/flagged_bench.py ban_recompute_materialized_backward=False --autocast_residual=True --recompute=$r \
    --variants="kernels compiled graphed" --bench_dir=$OUT/b_flag_$r > $OUT/b_flag_$r.txt 2>&1
  echo "== flag off, $r rc=$?"; grep -A3 "^Training step" $OUT/b_flag_$r.txt | tail -1 | cut -c1-110
done
timeout 140 python -m pytest -q -x tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" 2>&1 | tail -12 | cut -c1-300
