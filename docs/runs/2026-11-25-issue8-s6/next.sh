# Ready for the next session's first device call (nvidia-h100-x1, carry .devdata): the whole six-variant
# table with this session's code (the lean launch, the eager step check), then LLaMA's eager pair.
# Not yet run: this session's device time ran out (calls 1-7).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
# first, the launch path's CUDA tests: the review's fixes (5924ea9) came after this session's device time
timeout 120 python -m pytest -q tests/test_launch.py tests/test_choose.py > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
timeout 400 python bench.py --autocast_residual=True --bench_dir=$OUT/bench_all > $OUT/bench_all.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_all.txt; tail -14 $OUT/bench_all.txt
timeout 150 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --variants="baseline eager,kernels eager" \
  --bench_dir=$OUT/bench_llama_eager > $OUT/bench_llama_eager.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_llama_eager.txt; tail -8 $OUT/bench_llama_eager.txt
