# call 1: the LM head's copy (the fused loss reads weight_copy, kernels.AdamW writes it) on CUDA: its tests and
# the copies' tests after the twenty-eighth session's re-read (1bef3c7, not run on a GPU); then kernels compiled
# graphed with it against .devdata/head (1bef3c7: the block matrices' copies only), in turn, twice; then its profile
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 170 python -m pytest -q tests/test_linear_cross_entropy.py tests/test_model.py tests/test_adamw.py \
  -k "weight_copy or autocast or matmul_copies or copies" > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt; echo "t=$(( $(date +%s) - t0 ))"
for r in 1 2; do
  for tree in new head; do
    dir=.; [ $tree = head ] && dir=.devdata/head
    (cd $dir && timeout 100 python bench.py --autocast_residual=True --variants="kernels compiled graphed" \
      --bench_dir=/tmp/b$r$tree) > $OUT/bench_${tree}_$r.txt 2>&1
    echo "$tree $r rc $? $(grep -A1 '^ *variant' $OUT/bench_${tree}_$r.txt | tail -1) t=$(( $(date +%s) - t0 ))"
  done
done
grep "keeps" $OUT/bench_new_1.txt $OUT/bench_head_1.txt
timeout 130 python bench.py --autocast_residual=True --profile --profile_variant="kernels compiled graphed" \
  --variants="kernels compiled graphed" --bench_dir=/tmp/prof > $OUT/prof.txt 2>&1
echo "prof rc $?"; grep -A32 "GPU busy" $OUT/prof.txt | head -33; echo "t=$(( $(date +%s) - t0 ))"
