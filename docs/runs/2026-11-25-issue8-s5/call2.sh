# device call 2 (nvidia-h100-x1): the residual stream in bf16 (autocast_residual=True, the kernels
# variants only; the baselines keep nanoGPT's fp32 stream). The whole table, then recompute='mlp'
# with it (the memory target: <= 0.6x the compiled baseline's peak).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
b() {  # name, bench arguments...
  name=$1; shift
  timeout $T python bench.py --bench_dir=$OUT/bench_$name "$@" > $OUT/bench_$name.txt 2>&1
  echo "[rc=$?]" >> $OUT/bench_$name.txt
  tail -12 $OUT/bench_$name.txt
}
T=390 b ar --autocast_residual=True
T=180 b ar_mlp --autocast_residual=True --recompute=mlp --variants="baseline compiled,kernels compiled graphed"
