# device call 4 (nvidia-h100-x1): recompute's compiled variants again, now that model.py recomputes
# through selective checkpointing's per-op policy (call 3: compiled 'mlp' keeps 2,432 MiB for the
# backward as eager does, 3,297 before; compiled 'block' keeps 238 but its backward peaks at 4,252)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for mode in mlp block; do
  timeout 285 python bench.py --recompute=$mode --bench_dir=$OUT/bench_$mode \
    --variants="baseline compiled,kernels compiled,kernels compiled graphed" > $OUT/bench_$mode.txt 2>&1
  echo "[rc=$?]" >> $OUT/bench_$mode.txt
  tail -6 $OUT/bench_$mode.txt
done
