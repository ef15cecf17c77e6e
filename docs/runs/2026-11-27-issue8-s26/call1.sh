# call 1: the matmul plans' workspace (cuBLASLt zeroes part of it before the epilogue kernels: memsets and graph gaps,
# twenty-fourth session) - default, none for the epilogue products, none for any plan; in turn, twice; tanh graphed
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
D=docs/runs/2026-11-27-issue8-s26
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
for round in 1 2; do for ws in default epilogue all; do
  PLAN_WS=$ws timeout 170 python $D/ws_probe.py --autocast_residual=True --gelu_approximate=tanh \
    --variants="kernels compiled graphed" --bench_dir=/tmp/b_$ws$round > $OUT/ws_${ws}_$round.txt 2>&1
  echo "$ws $round rc $? $(grep 'ms/iter' $OUT/ws_${ws}_$round.txt | tail -1)"
done; done | tee $OUT/summary.txt
