# call 2: the copies as landed (model.py's matmul_copy, kept by kernels.AdamW; configure_optimizers' matmul_dtype,
# bench.py's and train.py's matmul_copies) on CUDA: their tests, then kernels compiled graphed with and without them
# (--matmul_copies=False), in turn, twice
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 200 python -m pytest -q tests/test_adamw.py tests/test_model.py -k "copies or bf16_training_step or compile_model_gives or cast_per_block" \
  > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
for r in 1 2; do
  for c in True False; do
    timeout 100 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --matmul_copies=$c --bench_dir=/tmp/b$r$c > $OUT/bench_copies_${c}_$r.txt 2>&1
    echo "copies $c $r rc $? $(grep -A1 '^ *variant' $OUT/bench_copies_${c}_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  done
done
grep "keeps\|AdamW lr" $OUT/bench_copies_True_1.txt
