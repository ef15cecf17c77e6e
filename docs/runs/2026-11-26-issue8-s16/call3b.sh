# Call 3b (the same machine, right after call 3): call 3's flagged runs failed to import kernels (runpy put the
# script's folder first on sys.path; flagged_bench.py now puts the repository root there). Those runs again.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
D=docs/runs/2026-11-26-issue8-s16
for r in activation none; do
  timeout 130 python $D/flagged_bench.py ban_recompute_materialized_backward=False --autocast_residual=True --recompute=$r \
    --variants="kernels compiled graphed" --bench_dir=$OUT/b_flag_$r > $OUT/b_flag_$r.txt 2>&1
  echo "== flag off, $r rc=$?"; grep -A3 "^Training step" $OUT/b_flag_$r.txt | tail -1 | cut -c1-110
done
timeout 140 python -m pytest -q -x tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" 2>&1 | tail -12 | cut -c1-300
