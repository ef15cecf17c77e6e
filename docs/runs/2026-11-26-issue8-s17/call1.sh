# Call 1 (nvidia-h100-x1, carry .devdata): where recompute='activation' spends its +1.3-1.5 ms over 'none' (a profile
# of kernels compiled graphed with each, per-kernel GPU time per step), and the sixteenth session's CPU-only refactor
# of kernels/norm.py checked natively (tests/test_norm.py on CUDA).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for rc in none activation; do
  timeout 170 python bench.py --autocast_residual=True --recompute=$rc --profile --profile_steps=5 \
    --profile_variant="kernels compiled graphed" --bench_dir=/tmp/p_$rc > /tmp/p_$rc.txt 2>&1
  echo "== profile $rc rc=$?"; cp /tmp/p_$rc/profile.txt $OUT/profile_$rc.txt; head -1 /tmp/p_$rc/profile.txt
  grep -i "peak\|MiB" /tmp/p_$rc.txt | tail -2 | cut -c1-200
done
timeout 170 python -m pytest -q tests/test_norm.py 2>&1 | grep -E "passed|failed|^E |error" | tail -5
