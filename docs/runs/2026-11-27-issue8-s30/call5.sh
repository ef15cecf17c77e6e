# call 5: _LtPlan.run made lean (its constant ctypes arguments made once, pointers as ints, the raw stream) on CUDA:
# the products' tests, run_probe.py again (run() as it is now), then GELU's tanh form, kernels compiled (launched
# from Python: host-bound, 72 of its products through gelu_mlp's plans), against .devdata/head (b2464a5), in turn
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 130 python -m pytest -q -x tests/test_matmul.py tests/test_gelu_mlp.py tests/test_linear_cross_entropy.py \
  > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt
tail -2 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
timeout 60 python docs/runs/2026-11-27-issue8-s30/run_probe.py > $OUT/run_probe.txt 2>&1; echo "probe rc $?"
grep "run()\|torch.mm" $OUT/run_probe.txt | tail -3
for r in 1 2; do
  for tree in new head; do
    dir=.; [ $tree = head ] && dir=.devdata/head
    (cd $dir && timeout 100 python bench.py --autocast_residual=True --gelu_approximate=tanh \
      --variants="kernels compiled" --bench_dir=/tmp/c$r$tree) > $OUT/bench_${tree}_$r.txt 2>&1
    echo "$tree $r rc $? $(grep -A1 '^ *variant' $OUT/bench_${tree}_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  done
done
