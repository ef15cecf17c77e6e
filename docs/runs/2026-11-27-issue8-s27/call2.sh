# call 2: the weight gradients in fp32 out of their products (wgrad_fp32.py, a prototype patching model.F.linear)
# against the tree as it is, kernels compiled graphed (erf), in turn twice; kernels.adamw with torch's fused
# arithmetic (the moments and the decay in fp64, the constants from an fp64 table) against dadf88f's kernel; its tests
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
D=docs/runs/2026-11-27-issue8-s27
t0=$(date +%s)
for r in 1 2; do
  timeout 150 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/a$r > $OUT/bench_as_is_$r.txt 2>&1
  echo "as is $r rc $? $(grep -A1 '^ *variant' $OUT/bench_as_is_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  timeout 150 python $D/wgrad_fp32.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/b$r > $OUT/bench_wgrad_fp32_$r.txt 2>&1
  echo "wgrad fp32 $r rc $? $(grep -A1 '^ *variant' $OUT/bench_wgrad_fp32_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
done
grep "^check" $OUT/bench_wgrad_fp32_1.txt
P=docs/runs/2026-11-27-issue8-s26/adamw_probe.py
timeout 60 python $P 1024x1x4 > $OUT/adamw_probe.txt 2>&1; echo "new rc $?" >> $OUT/adamw_probe.txt
(cd .devdata/head && timeout 60 python $P 1024x1x4 >> $OUT/adamw_probe.txt 2>&1; echo "old rc $?" >> $OUT/adamw_probe.txt)
cat $OUT/adamw_probe.txt; echo "t=$(( $(date +%s) - t0 ))"
timeout 120 python -m pytest -q -x tests/test_adamw.py tests/test_step_graph.py > $OUT/tests.txt 2>&1
echo "tests rc $?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
