# call 1: gelu_mlp reading AdamW's copies of the tanh MLP's two matrices (the twenty-ninth session's patch, applied)
# on CUDA: its tests, the copies' tests and AdamW's (f681038's kept_copies refactor, not run on a GPU); then GELU's
# tanh form, kernels compiled graphed, against .devdata/head (f681038, no copies for gelu_mlp), in turn, twice
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 170 python -m pytest -q tests/test_gelu_mlp.py tests/test_adamw.py tests/test_model.py \
  -k "gelu_mlp or adamw or copies" > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
for r in 1 2; do
  for tree in new head; do
    dir=.; [ $tree = head ] && dir=.devdata/head
    (cd $dir && timeout 120 python bench.py --autocast_residual=True --gelu_approximate=tanh \
      --variants="kernels compiled graphed" --bench_dir=/tmp/b$r$tree) > $OUT/bench_${tree}_$r.txt 2>&1
    echo "$tree $r rc $? $(grep -A1 '^ *variant' $OUT/bench_${tree}_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  done
done
grep -h "keeps\|peak" $OUT/bench_new_1.txt $OUT/bench_head_1.txt | head -6
