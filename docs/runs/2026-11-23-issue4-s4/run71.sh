#!/bin/bash
# issue 4, session 4, call 1: where the compiled GPT-2 step's time goes, kernels ('auto') and baseline
export PYTHONUNBUFFERED=1
for v in "kernels compiled" "baseline compiled"; do
  n=$(echo $v | cut -d' ' -f1)
  timeout 280 python bench.py --profile --profile_variant="$v" --bench_dir=/tmp/p_$n > $OUT/profile_run_$n.txt 2>&1; echo "$v rc $?"
  cp /tmp/p_$n/profile.txt $OUT/profile_$n.txt
  head -45 $OUT/profile_$n.txt
done
