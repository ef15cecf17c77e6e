# Tenth session, call 1 (nvidia-h100-x1, carry .devdata): Inductor's combo kernels and coordinate-descent tuning
# for the compiled variants, interleaved with the default. Prediction in docs/perf-notes.md (tenth session).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
W=docs/runs/2026-11-26-issue8-s10/with_inductor.py
V="baseline compiled,kernels compiled graphed"
i=0
for cfg in none combo_kernels=1 coordinate_descent_tuning=1 none combo_kernels=1; do
  i=$((i+1)); s=${cfg/none/}
  timeout 170 python $W "$s" bench.py --autocast_residual=True --variants="$V" --bench_dir=$OUT/b$i > $OUT/run$i.txt 2>&1
  echo "== run $i $cfg rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|losses agree|Error|error" $OUT/run$i.txt | cut -c1-170
done
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
