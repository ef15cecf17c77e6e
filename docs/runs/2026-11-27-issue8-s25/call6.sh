# call 6: the back-to-back time_ms test as mended; bench's table with the back-to-back column, nanoGPT's erf form
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 60 python -m pytest -q tests/test_choose.py -k back_to_back > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -2 $OUT/tests.txt
timeout 250 python bench.py --autocast_residual=True --bench_dir=$OUT/erf \
  --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_erf.txt 2>&1
echo "rc $?" >> $OUT/bench_erf.txt
grep -v "^\s*$" $OUT/bench_erf.txt | tail -9
