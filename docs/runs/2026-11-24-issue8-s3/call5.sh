# device call 5 (H100): recompute, continued
# 1. recompute_compiled_dropout.py with Inductor drawing as eager does (call 4: 'block' drew other
#    masks in the forward, so its gradients could not be compared)
# 2. python bench.py --recompute=block, the same variants as call 4's --recompute=mlp
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 120 python docs/runs/2026-11-24-issue8-s3/recompute_compiled_dropout.py fallback_random > $OUT/compiled_dropout.txt 2>&1
echo "[rc=$?]" >> $OUT/compiled_dropout.txt
timeout 400 python bench.py --recompute=block --bench_dir=$OUT/bench_block \
  --variants="baseline compiled,kernels compiled,kernels eager graphed,kernels compiled graphed" > $OUT/bench_block.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_block.txt
cat $OUT/compiled_dropout.txt | tail -3; tail -12 $OUT/bench_block.txt
