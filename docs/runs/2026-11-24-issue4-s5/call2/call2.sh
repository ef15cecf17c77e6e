# device call 2: is the eager training step host-bound, and what does a Triton launch cost on the host
D=docs/runs/2026-11-24-issue4-s5
timeout 120 python -u $D/launch_cost.py > $OUT/launch_cost.txt 2>&1
for v in "kernels eager" "baseline eager"; do
  timeout 200 python bench.py --profile --profile_variant="$v" --bench_dir=$OUT/prof_"${v// /_}" > $OUT/prof_"${v// /_}".txt 2>&1
done
rm -f $OUT/prof_*/trace.json
