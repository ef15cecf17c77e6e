# Tenth session, call 7 (nvidia-h100-x1, carry .devdata): bench's per-step timing (a sync after each step, as
# nanoGPT's bench) against the same steps back to back with one sync (back_to_back.py), in turn.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
V="baseline compiled,kernels compiled graphed"
i=0
for how in per_step back_to_back per_step back_to_back; do
  i=$((i+1))
  if [ $how = per_step ]; then cmd="bench.py"; else cmd="docs/runs/2026-11-26-issue8-s10/back_to_back.py bench.py"; fi
  timeout 115 python $cmd --autocast_residual=True --variants="$V" --bench_dir=/tmp/b$i > $OUT/run${i}_$how.txt 2>&1
  echo "== $i $how rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|losses agree|rror" $OUT/run${i}_$how.txt | cut -c1-120
done
