# call 11: matmul_plan looking a known problem up before its full checks: the MLP's host time again (host_probe.py),
# matmul's CUDA tests, and the compiled step launched from Python (host-bound) with GELU's tanh form and with erf
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 100 python docs/runs/2026-11-26-issue8-s24/host_probe.py > $OUT/host.txt 2>&1; echo "rc $?" >> $OUT/host.txt
grep -E "^(torch|triton):" $OUT/host.txt
timeout 100 python -m pytest -q -n 4 tests/test_matmul.py tests/test_gelu_mlp.py > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -2 $OUT/tests.txt
for g in tanh none; do
  timeout 150 python bench.py --autocast_residual=True --gelu_approximate=$g --bench_dir=$OUT/$g \
    --variants="kernels compiled" > $OUT/bench_compiled_$g.txt 2>&1; echo "rc $?" >> $OUT/bench_compiled_$g.txt
  grep -E "^kernels compiled|gelu:" $OUT/bench_compiled_$g.txt
done
