# device call 4 (H100): recompute
# 1. tests/test_model.py's recompute test natively on CUDA (Triton kernels compiled, not interpreted)
# 2. recompute_compiled_dropout.py: does torch.compile keep dropout's masks in the recomputation?
# 3. python bench.py --recompute=mlp: the compiled baseline against the kernels variants
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 120 python -m pytest -q tests/test_model.py -k recompute > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
timeout 120 python docs/runs/2026-11-24-issue8-s3/recompute_compiled_dropout.py > $OUT/compiled_dropout.txt 2>&1
echo "[rc=$?]" >> $OUT/compiled_dropout.txt
timeout 330 python bench.py --recompute=mlp --bench_dir=$OUT/bench_mlp \
  --variants="baseline compiled,kernels compiled,kernels eager graphed,kernels compiled graphed" > $OUT/bench_mlp.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_mlp.txt
tail -3 $OUT/tests.txt; cat $OUT/compiled_dropout.txt | tail -3; tail -12 $OUT/bench_mlp.txt
