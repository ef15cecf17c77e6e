# Call 1 (nvidia-h100-x1, carry .devdata): where the eager set's GPU time differs from the compiled set's.
# Per-kernel profiles of 'kernels eager graphed' and 'kernels compiled graphed' (bench.py --profile), one machine.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for v in "kernels eager graphed" "kernels compiled graphed"; do
  d=$OUT/prof_${v// /_}
  timeout 280 python bench.py --autocast_residual=True --profile --profile_steps=5 --profile_variant="$v" --bench_dir=$d > $d.txt 2>&1
  echo "== $v rc=$?"; gzip -f $d/trace.json; head -45 $d/profile.txt
done
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv
