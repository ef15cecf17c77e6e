# call 3: test_model's copies test with fp16 added; test_train's graphed, resumed, loss-falls and Muon runs (train.py now keeps the copies under autocast; the
# last session's runs of this subset timed out on cold machines), then the eager variants with and without the copies
# (LinearOfCopy is a Python Function per product where CastMatrices was one per block: host time launched from Python)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
t0=$(date +%s)
timeout 40 python -m pytest -q tests/test_model.py -k matmul_copies > $OUT/tests_model.txt 2>&1; echo "tests rc $?" >> $OUT/tests_model.txt
tail -2 $OUT/tests_model.txt
timeout 300 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph_trains_and_resumes or falls or resume_continues or muon_trains" \
  > $OUT/tests_train.txt 2>&1; echo "tests rc $?" >> $OUT/tests_train.txt; tail -3 $OUT/tests_train.txt; echo "t=$(( $(date +%s) - t0 ))"
for c in True False; do
  timeout 110 python bench.py --autocast_residual=True --variants="kernels eager,kernels eager graphed" --matmul_copies=$c --bench_dir=/tmp/e$c > $OUT/bench_eager_copies_${c}.txt 2>&1
  echo "copies $c rc $? t=$(( $(date +%s) - t0 ))"; grep -A2 '^ *variant' $OUT/bench_eager_copies_${c}.txt | tail -2
done
