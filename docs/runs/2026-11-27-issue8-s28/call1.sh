# call 1: the last session's untested changes on CUDA (test_adamw's two new tests, kernels.backend.device_scalar through
# adamw, muon_update and muon), with this session's copies argument of kernels.adamw; then the prototype of the block
# matrices' bf16 copies written by kernels.AdamW and read by their products (copies_bench.py), against bench.py as is,
# in turn, twice
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
D=docs/runs/2026-11-27-issue8-s28
t0=$(date +%s)
timeout 170 python -m pytest -q tests/test_adamw.py tests/test_muon_update.py tests/test_muon.py tests/test_step_graph.py \
  > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
for r in 1 2; do
  timeout 110 python $D/copies_bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/b$r > $OUT/bench_copies_$r.txt 2>&1
  echo "copies $r rc $? $(grep -A1 '^ *variant' $OUT/bench_copies_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  timeout 100 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/a$r > $OUT/bench_as_is_$r.txt 2>&1
  echo "as is $r rc $? $(grep -A1 '^ *variant' $OUT/bench_as_is_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
done
grep "^check" $OUT/bench_copies_1.txt; tail -4 $OUT/bench_copies_1.txt
