# call 3: call 2's A/B again, its prototype now importing its F.linear from a module (call 2's failed in torch.compile's
# guards: a traced function read __main__'s globals, which runpy swaps); kernels.adamw with only the moments in fp64
# (call 2: decay, moments and denominator in fp64, 1243 us against 1192 before) against dadf88f's; test_adamw
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
D=docs/runs/2026-11-27-issue8-s27
t0=$(date +%s)
P=docs/runs/2026-11-27-issue8-s26/adamw_probe.py
timeout 60 python $P 1024x1x4 > $OUT/adamw_probe.txt 2>&1; echo "new rc $?" >> $OUT/adamw_probe.txt
(cd .devdata/head && timeout 60 python $P 1024x1x4 >> $OUT/adamw_probe.txt 2>&1; echo "old rc $?" >> $OUT/adamw_probe.txt)
cat $OUT/adamw_probe.txt; echo "t=$(( $(date +%s) - t0 ))"
timeout 100 python -m pytest -q tests/test_adamw.py > $OUT/tests.txt 2>&1
echo "tests rc $?" >> $OUT/tests.txt; tail -2 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
for r in 1 2; do
  timeout 120 python $D/wgrad_fp32.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/b$r > $OUT/bench_wgrad_fp32_$r.txt 2>&1
  echo "wgrad fp32 $r rc $? $(grep -A1 '^ *variant' $OUT/bench_wgrad_fp32_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  timeout 120 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/a$r > $OUT/bench_as_is_$r.txt 2>&1
  echo "as is $r rc $? $(grep -A1 '^ *variant' $OUT/bench_as_is_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
done
grep "^check" $OUT/bench_wgrad_fp32_1.txt; tail -5 $OUT/bench_wgrad_fp32_1.txt
