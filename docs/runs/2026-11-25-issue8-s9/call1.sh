# Ninth session, call 1 (nvidia-h100-x1, carry .devdata): next.sh of the eighth session, run as it was written.
# The review fixes of cast_per_block (after call 8) have run on the CPU only:
# 1. the CUDA tests they touch; 2. the minimal repro of the compiled zero gradients (for an upstream
# report if it reproduces on the GPU machine's torch 2.11); 3. recompute='mlp' eager graphed, the tree before
# cast_per_block (.devdata/before = git archive 17cb04e) against this one: the peak should be equal
# (prediction: within 10 MiB; the MLP's cast pair is left to autocast inside the recomputed region);
# 4. the GPT-2 eager pair twice.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest tests/test_model.py tests/test_step_graph.py tests/test_choose.py -q > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -2 $OUT/tests.txt
timeout 60 python docs/runs/2026-11-25-issue8-s8/foreach_repro.py > $OUT/foreach_repro.txt 2>&1; cat $OUT/foreach_repro.txt
for tree in before after; do
  dir=$([ $tree = before ] && echo .devdata/before || echo .)
  (cd $dir && timeout 90 python bench.py --autocast_residual=True --recompute=mlp --variants="kernels eager graphed" \
    --bench_dir=$OUT/bench_mlp_$tree) > $OUT/mlp_$tree.txt 2>&1
  echo "mlp $tree: $(grep -E '^ *kernels eager graphed +[0-9]' $OUT/mlp_$tree.txt | cut -c1-80)"
done
for i in 1 2; do
  timeout 80 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" --bench_dir=$OUT/bench_eager_$i \
    > $OUT/eager_$i.txt 2>&1
  echo "eager $i: $(grep -E '^ *(baseline|kernels) eager +[0-9]' $OUT/eager_$i.txt | cut -c1-110 | tr '\n' '|')"
done
