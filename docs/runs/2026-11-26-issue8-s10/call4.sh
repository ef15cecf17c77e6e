# Tenth session, call 4 (nvidia-h100-x1, carry .devdata): on top of compile_model's combo kernels, Inductor's
# aggressive fusion, and combo kernels benchmarked against separate kernels; interleaved with the plain code.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
W=docs/runs/2026-11-26-issue8-s10/with_inductor.py
V="baseline compiled,kernels compiled graphed"
i=0
for cfg in none aggressive_fusion=1 benchmark_combo_kernel=1 none aggressive_fusion=1; do
  i=$((i+1)); s=${cfg/none/}
  timeout 115 python $W "$s" bench.py --autocast_residual=True --variants="$V" --bench_dir=$OUT/b$i > $OUT/run$i.txt 2>&1
  echo "== run $i $cfg rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|losses agree|rror" $OUT/run$i.txt | cut -c1-170
done
rm -rf $OUT/b*
