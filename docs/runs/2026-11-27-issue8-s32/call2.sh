# call 2: call 1's kernels eager (launched from Python) took 45.11 ms, where the twenty-ninth session's erf table had
# 31.69: the host's speed (host_speed.py), kernels eager again beside the eager baseline, its profile (GPU busy
# against the step); then the memory point's run, recompute='activation'
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
D=docs/runs/2026-11-27-issue8-s32
(nproc; cat /proc/loadavg; lscpu | grep -i "model name\|mhz") > $OUT/host.txt 2>&1
timeout 60 python $D/host_speed.py >> $OUT/host.txt 2>&1; cat $OUT/host.txt
for r in 1 2; do
  timeout 120 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" \
    --bench_dir=/tmp/e$r > $OUT/eager_$r.txt 2>&1
  echo "eager $r rc $?"; grep -A3 "^ *variant" $OUT/eager_$r.txt; grep "the eager step" $OUT/eager_$r.txt
  echo "t=$(( $(date +%s) - t0 ))"
done
timeout 120 python bench.py --autocast_residual=True --profile --profile_variant="kernels eager" \
  --variants="kernels eager" --bench_dir=/tmp/prof > $OUT/prof_eager.txt 2>&1
echo "prof rc $?"; grep -B2 -A12 "GPU busy" $OUT/prof_eager.txt | head -30; echo "t=$(( $(date +%s) - t0 ))"
timeout 200 python bench.py --autocast_residual=True --recompute=activation \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" --bench_dir=/tmp/rc > $OUT/recompute.txt 2>&1
echo "recompute rc $?"; grep -A4 "^ *variant" $OUT/recompute.txt; grep "losses agree" $OUT/recompute.txt
timeout 30 python $D/host_speed.py >> $OUT/host.txt 2>&1; tail -3 $OUT/host.txt
echo "t=$(( $(date +%s) - t0 ))"
